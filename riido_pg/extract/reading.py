"""Reading one file's source, or saying why it is skipped.

A file is opened without following a symlink (a file swapped for a link after
the walk is refused) and without blocking (a FIFO is refused, not waited on),
and must be a regular file. The size limit is checked on the open file and
again while reading, so a file that grows does not get past it. Then:

* binary: a NUL byte anywhere in the file (NUL cannot be stored in
  PostgreSQL text, so a NUL past the first few KiB counts too);
* undecodable: the content is not valid UTF-8. Such files are skipped, not
  decoded with replacement characters, so no document has invented text
  (legacy-encoded sources, e.g. Latin-1, are reported in ``problems``);
* a UTF-8 byte order mark is dropped; line endings are kept as they are.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal

__all__ = ["Skipped", "check_content", "read_source", "too_large"]

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CHUNK = 1 << 20

SkipKind = Literal["unreadable", "too_large", "binary", "undecodable"]


@dataclass(frozen=True, slots=True)
class Skipped:
    """Why a file was not extracted: the counter to bump and a short reason."""

    kind: SkipKind
    reason: str


def _oserror(exc: OSError) -> Skipped:
    if isinstance(exc, FileNotFoundError):
        return Skipped("unreadable", "vanished")
    if isinstance(exc, PermissionError):
        return Skipped("unreadable", "permission denied")
    return Skipped("unreadable", (exc.strerror or type(exc).__name__).lower())


def too_large(size: int, limit: int) -> Skipped:
    """A file of ``size`` bytes, over ``limit``."""
    return Skipped("too_large", f"{size} bytes; the limit is {limit}")


def read_source(path: str, max_bytes: int) -> bytes | Skipped:
    """The file's bytes (valid UTF-8, BOM dropped), or why it is skipped."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return _oserror(exc)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Skipped("unreadable", "not a regular file")
        if info.st_size > max_bytes:
            return too_large(info.st_size, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            return Skipped("too_large", f"more than {max_bytes} bytes; it grew while read")
    except OSError as exc:
        return _oserror(exc)
    finally:
        os.close(fd)
    return check_content(b"".join(chunks))


def check_content(data: bytes) -> bytes | Skipped:
    """A file's bytes with the BOM dropped, or why they are skipped (binary, not
    UTF-8); the same rules whether they came from disk or from a git blob."""
    if b"\0" in data:
        return Skipped("binary", "contains a nul byte")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped("undecodable", f"invalid utf-8 at byte {exc.start}")
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
