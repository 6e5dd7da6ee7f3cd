"""Asking: stream one answer, the best-effort steps around it, and the model table."""
