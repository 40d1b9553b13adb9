"""xlac's own dialects (xlac.dialects).

The ``xla`` dialect, with its ``xla.fusion`` region op, arrives with the
fusion work; this package is where it lives.
"""
