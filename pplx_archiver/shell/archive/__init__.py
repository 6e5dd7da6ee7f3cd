"""The archive on disk: store, index, writer lock, atomic writes, registry, search, assets."""
