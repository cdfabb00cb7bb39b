"""What a file held, remembered by content across revisions of one repository.

Reading a history snapshot by snapshot (``riido-pg eval`` over a history corpus, a
script loading commit after commit with ``--rev``) parses almost the same files each
time: consecutive commits share nearly every blob. A :class:`FileCache` handed to
:func:`~riido_pg.extract.api.iter_functions` (``cache=``) keeps each parsed file's
functions under its path and git blob id (the stored one,
:class:`~riido_pg.extract.stored_cache.StoredFileCache`, keeps them in a file between
runs), so the next revision parses only the files
that changed (the in-memory cache does not even read the others; the stored one reads
each file, to check its entry against the bytes). It applies only to trees read at a
revision (a directory on disk has no content ids); the output is the same as without
it, counts and problems included.
"""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.reading import Skipped

__all__ = ["FileCache", "Key", "check", "count", "decode_found", "encode_found"]

#: A stored entry decompressing to more is not read.
MAX_ENTRY_BYTES = 1 << 30

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

    #: Whether ``get`` must be shown the file's content (read again) to answer.
    checks_content = False

    def get(
        self, key: Key, content: bytes | Skipped | None = None
    ) -> FileFunctions | Skipped | None:
        """What the file under ``key`` gave, or None; ``content`` (the file as read
        now) is needed only when ``checks_content``."""
        found = self._files.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def flush(self) -> None:
        """Keep what was parsed beyond this process (nothing to do in memory)."""

    def close(self) -> None:
        """Let go of what a walk that stopped early (no ``flush``) had begun to keep."""

    def put(
        self, key: Key, found: FileFunctions | Skipped, content: bytes | Skipped | None = None
    ) -> None:
        """Keep what the file gave (``content``: the bytes it was parsed from)."""
        if key not in self._files and len(self._files) >= self.max_files:
            del self._files[next(iter(self._files))]
        self._files[key] = found


def encode_found(found: FileFunctions | Skipped) -> bytes:
    """What a file gave, as compressed JSON (an entry of the stored cache,
    :mod:`riido_pg.extract.stored_cache`)."""
    from riido_pg.extract.reading import Skipped

    data: list[Any]
    if isinstance(found, Skipped):
        data = ["skipped", found.kind, found.reason]
    else:
        functions = [[f.id, f.text, f.metadata] for f in found.functions]
        data = ["functions", functions, found.too_deep, found.long_ids, found.steps]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


_METADATA = {"language": str, "path": str, "qualname": str, "start_line": int, "end_line": int}


def check(ok: bool) -> None:
    if not ok:
        raise ValueError("not a cache entry")


def count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("not a count")
    return value


def decode_found(stored: bytes) -> FileFunctions | Skipped:
    """A stored entry's result, every field of the right type (ValueError if not)."""
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.model import Function, FunctionMetadata
    from riido_pg.extract.reading import Skipped

    inflate = zlib.decompressobj()
    raw = inflate.decompress(stored, MAX_ENTRY_BYTES)
    check(inflate.eof and not inflate.unconsumed_tail and not inflate.unused_data)
    data = json.loads(raw.decode("utf-8", "surrogatepass"))
    check(isinstance(data, list) and len(data) in (3, 5))
    if data[0] == "skipped":
        check(len(data) == 3 and all(isinstance(x, str) for x in data[1:]))
        check(data[1] in ("unreadable", "too_large", "binary", "undecodable"))
        return Skipped(data[1], data[2])
    check(data[0] == "functions" and len(data) == 5 and isinstance(data[1], list))
    functions = []
    for item in data[1]:
        check(isinstance(item, list) and len(item) == 3)
        fid, text, meta = item
        check(isinstance(fid, str) and isinstance(text, str) and isinstance(meta, dict))
        check(meta.keys() == _METADATA.keys())
        check(all(type(meta[k]) is t for k, t in _METADATA.items()))
        functions.append(Function(fid, text, cast(FunctionMetadata, meta)))
    counts = [count(x) for x in data[2:]]
    return FileFunctions(functions, too_deep=counts[0], long_ids=counts[1], steps=counts[2])
