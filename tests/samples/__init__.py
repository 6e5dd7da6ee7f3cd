"""Real captured payloads (copied from the project's shared samples; see real/SOURCES.md)."""

from pathlib import Path

REAL = Path(__file__).resolve().parent / "real"
