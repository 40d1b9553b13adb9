"""Passes of the ingest stage: one entry function, checked for support."""
