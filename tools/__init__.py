"""Entry points of the xla-* command-line tools (xlac.tools)."""
