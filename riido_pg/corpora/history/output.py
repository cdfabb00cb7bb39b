"""Writing a corpus directory so that no half-written one is ever at its path.

The files are written into a new temporary directory beside the target (``mkdtemp``:
an unpredictable name), which is renamed onto the target only when every file is
complete. An error or an interrupt (SIGINT, SIGTERM) before that removes the
temporary directory and leaves the target as it was.

The target (``--output DIR``; a symlink is followed to its directory) may be:

* missing: it is created; its parent must exist (no parent directories are made,
  as for every output path, see :mod:`riido_pg.files`);
* an empty directory: it becomes the corpus;
* a history corpus (it has ``history.json``): replaced only with ``replace``; the old
  directory is moved aside, the new one renamed into place, the old one removed (so
  the path only ever holds the old corpus or the new one, or, for an instant,
  nothing);
* anything else (a file, a directory holding other things): refused.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import suppress
from pathlib import Path

from riido_pg.corpora.history.corpus import is_history_corpus
from riido_pg.errors import Hint, OutputError

__all__ = ["check_output_dir", "write_corpus_dir"]


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def check_output_dir(path: Path, replace: bool) -> Path:
    """The directory the corpus will be renamed to (a symlink's target), or
    OutputError now when it could not be (see the module docstring)."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if target.exists():
        if not target.is_dir():
            raise OutputError(f"{path}: cannot write: not a directory")
        try:
            empty = not any(target.iterdir())
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {_reason(exc)}") from exc
        if not empty and not is_history_corpus(target):
            raise OutputError(
                f"{path}: not empty and not a history corpus; give a new or empty directory"
            )
        if not empty and not replace:
            raise OutputError(
                f"{path}: holds a history corpus already",
                Hint("add --replace to rebuild", "pass replace=True to rebuild"),
            )
    elif not target.parent.is_dir():
        raise OutputError(f"{path}: cannot create: {target.parent}: no such directory")
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_corpus_dir(path: Path, files: dict[str, bytes], *, replace: bool) -> None:
    """Write ``files`` (relative path → bytes) as the directory ``path``, whole or
    not at all (see the module docstring)."""
    target = check_output_dir(path, replace)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_reason(exc)}") from exc
    try:
        for rel, data in sorted(files.items()):
            file = tmp / rel
            file.parent.mkdir(exist_ok=True)
            file.write_bytes(data)
        os.chmod(tmp, 0o777 & ~_umask())
        if target.exists() and any(target.iterdir()):
            _swap(tmp, target)
        else:
            os.replace(tmp, target)  # onto nothing, or onto an empty directory
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_reason(exc)}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(new: Path, target: Path) -> None:
    """Put directory ``new`` at ``target`` in place of the corpus there."""
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    try:
        os.replace(target, old)
        try:
            os.replace(new, target)
        except BaseException:
            os.replace(old, target)
            raise
    except BaseException:
        with suppress(OSError):
            old.rmdir()
        raise
    shutil.rmtree(old, ignore_errors=True)
