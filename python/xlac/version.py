"""xlac's version (also in pyproject.toml)."""

__version__ = "0.1.0"


def bindings_version() -> str:
    """Version of the package that provides the MLIR bindings (for cache keys)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return "torch-mlir " + version("torch-mlir")
    except PackageNotFoundError:
        return "torch-mlir unknown"
