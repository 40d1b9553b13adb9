"""xlac's version (also in pyproject.toml)."""

__version__ = "0.1.0"


def bindings_version() -> str:
    """Version of the package that provides the MLIR bindings (for cache keys)."""
    version = installed_version("torch-mlir")
    return "torch-mlir " + (version or "unknown")


def installed_version(distribution: str) -> str | None:
    """``distribution``'s installed version, None where it is not installed: read
    from its ``.dist-info`` (``xlac.distributions``: no ``importlib.metadata``
    to import, 25-60 ms, on a first compile's serial path), else asked of
    ``importlib.metadata`` (an egg, a zip)."""
    from xlac.distributions import version
    found = version(distribution)
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as metadata_version
    try:
        return metadata_version(distribution)
    except PackageNotFoundError:
        return None
