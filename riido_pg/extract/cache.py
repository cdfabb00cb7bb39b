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

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.reading import Skipped

__all__ = ["FileCache"]

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

    def put(self, key: Key, found: FileFunctions | Skipped) -> None:
        if key not in self._files and len(self._files) >= self.max_files:
            del self._files[next(iter(self._files))]
        self._files[key] = found
