"""The offline care commands: re-render, assets-backfill, reindex, verify, status, usage."""
