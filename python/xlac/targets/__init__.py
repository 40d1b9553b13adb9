"""Code generation and runtimes, one subpackage per target."""
