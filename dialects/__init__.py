"""xlac's own dialects (xlac.dialects).

``xla``: ``xla.fusion``, a region op holding the ops of one kernel, and its
terminator ``xla.yield`` (``dialects/xla.py``; README.md documents each op
and why they are unregistered generic ops rather than IRDL definitions).
"""
