"""Writing files whole: a reader sees the old file or the new one, never a part.

Every file riido-pg writes for a user (eval output, TREC run files, BEIR corpora,
the embedded server's markers) goes through :func:`atomic_file`: the content is
written to a hidden temporary file beside the target and renamed over it when
complete; an error (or an interrupt) removes the temporary file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_file", "write_atomically"]


@contextmanager
def atomic_file(path: Path) -> Iterator[IO[bytes]]:
    """A binary file handle whose content replaces ``path`` when the block ends
    without an error. Creates the parent directories; honours the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomically(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one rename."""
    with atomic_file(path) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
