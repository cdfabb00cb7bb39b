"""Writing the files a user names (``--output``, ``--run-dir``, corpus directories).

:func:`output_file` decides how to write by what is at the path, never by its name:

* ``-``: standard output, as a stream;
* a character device (``/dev/null``, a terminal) or a FIFO: opened and written as a
  stream, never replaced;
* a symbolic link: followed to its final target, and the rules apply to the target
  (so the link stays a link and its target gets the content);
* a regular file, or nothing yet: written whole. The content goes to a new temporary
  file beside the target, created with ``mkstemp`` (an unpredictable name, ``O_EXCL``:
  nothing planted at a predictable name can redirect it), and is renamed over the
  target only when the block ends without an error. After any error the old file is
  untouched and no temporary file is left. A replaced file keeps its permission bits;
  a new one gets ``0o666`` less the umask, like any file a program creates.

Anything else (a directory, a socket, a missing parent directory) is
:class:`~riido_pg.errors.OutputError`: parent directories are never created on the
user's behalf, except the one directory :func:`output_dir` is asked for.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, NamedTuple

from riido_pg.errors import OutputError

__all__ = ["STDOUT", "check_output", "output_dir", "output_file", "write_output"]

#: The path that means standard output.
STDOUT = "-"


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Plan(NamedTuple):
    """How :func:`output_file` writes a path: ``stream`` (stdout, a device, a FIFO) or
    ``replace`` (a regular file, or nothing yet), at ``target`` (a symlink's target)."""

    how: str
    target: Path
    existing: os.stat_result | None


def _plan(path: Path | str) -> _Plan:
    """How to write ``path``, or OutputError saying why it cannot be written."""
    if str(path) == STDOUT:
        return _Plan("stdout", Path(STDOUT), None)
    shown = Path(path)
    target = Path(os.path.realpath(shown)) if shown.is_symlink() else shown
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise OutputError(f"{shown}: cannot write: {_reason(exc)}") from exc
    if existing is None:
        parent = target.parent
        if not parent.is_dir():
            what = "not a directory" if parent.exists() else "no such directory"
            raise OutputError(f"{shown}: cannot write: {parent}: {what}")
        return _Plan("replace", target, None)
    mode = existing.st_mode
    if stat.S_ISDIR(mode):
        raise OutputError(f"{shown}: cannot write: is a directory")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return _Plan("stream", target, existing)
    if not stat.S_ISREG(mode):
        raise OutputError(f"{shown}: cannot write: not a regular file, device or FIFO")
    return _Plan("replace", target, existing)


def check_output(path: Path | str) -> None:
    """Raise :class:`OutputError` now when :func:`output_file` could not write ``path``
    (a directory, a socket, a missing parent), so a bad path costs no work."""
    _plan(path)


@contextmanager
def _stream(path: Path, shown: Path) -> Iterator[IO[bytes]]:
    try:
        fh = open(path, "wb")
    except OSError as exc:
        raise OutputError(f"{shown}: cannot write: {_reason(exc)}") from exc
    with fh:
        yield fh


@contextmanager
def _replace(target: Path, shown: Path, existing: os.stat_result | None) -> Iterator[IO[bytes]]:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"{shown}: cannot write: {_reason(exc)}") from exc
    try:
        mode = stat.S_IMODE(existing.st_mode) if existing else 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
        os.replace(tmp, target)
    except OSError as exc:
        raise OutputError(f"{shown}: cannot write: {_reason(exc)}") from exc
    finally:
        with suppress(FileNotFoundError):
            os.unlink(tmp)


@contextmanager
def output_file(path: Path | str) -> Iterator[IO[bytes]]:
    """A binary handle for the file a user named (see the module docstring). A regular
    file is replaced only when the block ends without an error."""
    plan = _plan(path)
    if plan.how == "stdout":
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
    elif plan.how == "stream":
        with _stream(plan.target, Path(path)) as fh:
            yield fh
    else:
        with _replace(plan.target, Path(path), plan.existing) as fh:
            yield fh


def write_output(path: Path | str, data: bytes | str) -> None:
    """Write ``data`` (text as UTF-8) to the file a user named, by :func:`output_file`."""
    with output_file(path) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def output_dir(path: Path) -> Path:
    """The directory a user named for output (``--run-dir``, a corpus directory),
    created if it does not exist; its parent must exist."""
    if path.is_dir():
        return path
    if path.exists():
        raise OutputError(f"{path}: cannot write: not a directory")
    if not path.parent.is_dir():
        raise OutputError(f"{path}: cannot create: {path.parent}: no such directory")
    try:
        path.mkdir()
    except FileExistsError:
        if not path.is_dir():
            raise OutputError(f"{path}: cannot write: not a directory") from None
    except OSError as exc:
        raise OutputError(f"{path}: cannot create: {_reason(exc)}") from exc
    return path
