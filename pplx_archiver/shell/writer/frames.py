"""The frames of the writer process's pipes: pickled values, each length first.

The run (:mod:`~pplx_archiver.shell.writer.writer_process`) sends calls and the child
(:mod:`~pplx_archiver.shell.writer.writer_child`) answers them, each as one frame.
"""

from __future__ import annotations

import pickle
import struct
from typing import IO, Any

from pplx_archiver.errors import StoreError

COMMIT_ONLINE = "commit_online"  # commit, then register the thread's online variants
_HEADER = struct.Struct("!Q")


def frame(value: Any) -> bytes:
    """One pickled value, length first: what :func:`write_frame` writes."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def write_frame(stream: IO[bytes], value: Any) -> None:
    """One pickled value, length first."""
    stream.write(frame(value))
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value, or raise EOFError when the other side has gone."""
    head = _read_exactly(stream, _HEADER.size)
    return pickle.loads(_read_exactly(stream, _HEADER.unpack(head)[0]))  # frames of our own child


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) != size:
        raise EOFError("the archive writer process closed its pipe")
    return data


def portable(exc: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a StoreError naming it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # any pickling failure: send a plain error instead
        return StoreError(f"{type(exc).__name__}: {exc}")
    return exc
