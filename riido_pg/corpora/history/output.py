"""Writing a corpus directory so that no half-written one is ever at its path.

The files are written into a new temporary directory beside the target (``mkdtemp``:
an unpredictable name), which is renamed onto the target only when every file is
complete. An error or an interrupt (SIGINT, SIGTERM) before that removes the
temporary directory and leaves the target as it was.

The target (``--output DIR``; a symlink is followed to its directory) may be:

* missing: it is created; its parent must exist (no parent directories are made,
  as for every output path, see :mod:`riido_pg.files`);
* an empty directory: it becomes the corpus;
* a history corpus riido-pg wrote, recognised by everything it must hold and nothing
  else (:func:`written_corpus`: ``history.json`` whose ``format`` is a history
  corpus's, the files its ``files`` names, each matching its sha256, and no other
  file, directory or symlink): replaced only with ``replace``; the old directory is
  moved aside, checked again, the new one renamed into place, and the old one's files
  removed one by one (so the path only ever holds the old corpus or the new one, or,
  for an instant, nothing, and nothing riido-pg did not write is ever deleted);
* anything else (a file, a directory holding other things, a ``history.json`` beside
  files of the user's, a corpus whose files were changed): refused, and ``replace``
  does not change that.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from contextlib import suppress
from pathlib import Path

from riido_pg.corpora.history.corpus import FORMAT, MANIFEST_FILE
from riido_pg.errors import Hint, OutputError

__all__ = ["check_output_dir", "write_corpus_dir", "written_corpus"]

#: The largest manifest read to recognise a corpus (one with every snapshot is far less).
_MANIFEST_LIMIT = 64 << 20


def _regular_file(path: Path) -> bool:
    with suppress(OSError):
        return stat.S_ISREG(path.lstat().st_mode)
    return False


def _sha256(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def written_corpus(directory: Path) -> list[str] | None:
    """The files of the history corpus riido-pg wrote at ``directory`` (relative
    paths), or None unless it holds exactly one: a manifest of the corpus format, the
    files it lists with the checksums it gives, and nothing else."""
    manifest_path = directory / MANIFEST_FILE
    if not _regular_file(manifest_path) or manifest_path.lstat().st_size > _MANIFEST_LIMIT:
        return None
    try:
        manifest = json.loads(manifest_path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return None
    expected: set[str] = {MANIFEST_FILE}
    for rel, checksum in files.items():
        parts = rel.split("/")
        if not isinstance(checksum, str) or "" in parts or "." in parts or ".." in parts:
            return None
        expected.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
        if not _regular_file(directory / rel) or _sha256(directory / rel) != checksum:
            return None
    try:
        found = {p.relative_to(directory).as_posix() for p in directory.rglob("*")}
    except OSError:
        return None
    return sorted([MANIFEST_FILE, *files]) if found == expected else None


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
        if not empty and written_corpus(target) is None:
            raise OutputError(
                f"{path}: not empty and not a history corpus riido-pg wrote (it is replaced "
                "only when it holds a corpus's files and nothing else); give a new or empty "
                "directory"
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
    """Put directory ``new`` at ``target`` in place of the corpus there; OutputError,
    and ``target`` as it was, when it no longer holds only a corpus once moved aside."""
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    files: list[str] | None = None
    try:
        os.replace(target, old)
        try:
            files = written_corpus(old)
            if files is None:
                raise OutputError(
                    f"{target}: changed while the corpus was written: no longer only a history "
                    "corpus riido-pg wrote; left as it is"
                )
            os.replace(new, target)
        except BaseException:
            os.replace(old, target)
            raise
    except BaseException:
        with suppress(OSError):
            old.rmdir()
        raise
    _remove(old, files or [])


def _remove(old: Path, files: list[str]) -> None:
    """Remove the corpus's ``files`` and then its directories: what else may have
    appeared there since it was checked is left where it is."""
    directories: set[Path] = {old}
    for rel in files:
        with suppress(OSError):
            (old / rel).unlink()
        directories.update(p for p in (old / rel).parents if old in p.parents)
    for directory in sorted(directories, key=lambda p: len(p.parts), reverse=True):
        with suppress(OSError):
            directory.rmdir()
