"""The models of export_models.py, one module per frontend: PyTorch through torch-mlir
(``torch_models.py``) and flax / jax.numpy (``jax_models.py``); each has ``export(name)``."""
