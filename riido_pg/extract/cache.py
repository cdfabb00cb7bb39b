"""What a file held, remembered by content across revisions of one repository.

Reading a history snapshot by snapshot (``riido-pg eval`` over a history corpus, a
script loading commit after commit with ``--rev``) parses almost the same files each
time: consecutive commits share nearly every blob. A :class:`FileCache` handed to
:func:`~riido_pg.extract.api.iter_functions` (``cache=``) keeps each parsed file's
functions under its path and git blob id, so the next revision parses only the files
that changed, and does not even read the others. It applies only to trees read at a
revision (a directory on disk has no content ids); the output is the same as without
it, counts and problems included.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.reading import Skipped

__all__ = ["FileCache", "StoredFileCache", "stored_cache_path"]

#: (relative path, blob id, language, the largest file read): the same bytes at the
#: same path in the same language give the same functions, ids included.
Key = tuple[str, str, str, int]


class FileCache:
    """Parsed files (or why a file was skipped: binary, too large, …) by path, blob
    id, language and size limit, the oldest forgotten first once ``max_files`` are
    held."""

    def __init__(self, max_files: int = 100_000) -> None:
        if max_files < 1:
            raise ValueError("max_files must be at least 1")
        self.max_files = max_files
        self._files: dict[Key, FileFunctions | Skipped] = {}
        #: Files answered from the cache, and files parsed.
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, key: object) -> bool:
        return key in self._files

    def get(self, key: Key) -> FileFunctions | Skipped | None:
        found = self._files.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def flush(self) -> None:
        """Keep what was parsed beyond this process (nothing to do in memory)."""

    def put(self, key: Key, found: FileFunctions | Skipped) -> None:
        if key not in self._files and len(self._files) >= self.max_files:
            del self._files[next(iter(self._files))]
        self._files[key] = found


#: Bumped when the stored file's layout changes.
STORED_FORMAT = 1


def _extractor_digest() -> str:
    """A digest of the extractor's own source: a cache written by another version of
    the rules is not read."""
    here = Path(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _encode(found: FileFunctions | Skipped) -> list[Any]:
    from riido_pg.extract.reading import Skipped

    if isinstance(found, Skipped):
        return ["skipped", found.kind, found.reason]
    functions = [[f.id, f.text, f.metadata] for f in found.functions]
    return ["functions", functions, found.too_deep, found.long_ids, found.steps]


def _decode(data: list[Any]) -> FileFunctions | Skipped:
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.model import Function
    from riido_pg.extract.reading import Skipped

    if data[0] == "skipped":
        return Skipped(data[1], data[2])
    functions = [Function(i, t, m) for i, t, m in data[1]]
    return FileFunctions(functions, too_deep=data[2], long_ids=data[3], steps=data[4])


class StoredFileCache(FileCache):
    """A :class:`FileCache` kept in a file between runs: ``riido-pg load REPO --rev
    REV`` in a shell loop over a history parses only what each commit changed.

    The file keeps the files the last run read (one tree's worth, so it does not grow
    with the history), under the extractor's digest: a file of other rules, or one
    that cannot be read, is ignored (the run parses everything) and replaced. Written
    whole and renamed into place; concurrent runs each leave a valid file."""

    def __init__(self, path: Path, max_files: int = 100_000) -> None:
        super().__init__(max_files)
        self.path = path
        self._used: set[Key] = set()
        self._digest = _extractor_digest()
        self._read()

    def _read(self) -> None:
        try:
            with gzip.open(self.path, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("format") != STORED_FORMAT or data.get("extractor") != self._digest:
                return
            for rel, oid, lang, limit, found in data["files"]:
                self._files[(rel, oid, lang, int(limit))] = _decode(found)
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError):
            self._files.clear()  # unreadable or of another shape: start empty

    def get(self, key: Key) -> FileFunctions | Skipped | None:
        found = super().get(key)
        if found is not None:
            self._used.add(key)
        return found

    def put(self, key: Key, found: FileFunctions | Skipped) -> None:
        super().put(key, found)
        self._used.add(key)

    def flush(self) -> None:
        """Store what this run read, if it parsed anything new (best effort: a cache
        that cannot be written is skipped, never an error)."""
        if not self.misses:
            return
        files = [[*key, _encode(self._files[key])] for key in self._used if key in self._files]
        files.sort(key=lambda f: (f[0], f[1], f[2], f[3]))
        body = {"format": STORED_FORMAT, "extractor": self._digest, "files": files}
        try:
            directory = os.path.dirname(self.path)
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".files.", dir=directory)
            try:
                with (
                    os.fdopen(fd, "wb") as raw,
                    gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as fh,
                ):
                    fh.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
                os.replace(tmp, self.path)
            except BaseException:
                with suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass


def stored_cache_path(home: Path, git_dir: Path) -> Path:
    """Where the stored cache of the repository at ``git_dir`` lives under ``home``."""
    name = hashlib.sha256(os.fsencode(git_dir.resolve())).hexdigest()[:20]
    return home / "cache" / "files" / f"{name}.json.gz"
