"""An archiving run: runner, pipeline, scheduler, progress, monitoring, deletions, spaces."""
