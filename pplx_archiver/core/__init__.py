"""Pure render core: raw thread payloads in, archive files and findings out; no I/O."""
