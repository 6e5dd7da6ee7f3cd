"""The run's writer in a process of its own: proxy, child, pipe frames, the offload decision."""
