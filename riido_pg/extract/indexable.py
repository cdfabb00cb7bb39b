"""Whether a function's text holds a word too long for PostgreSQL to index: shared by
a source tree's documents (:mod:`riido_pg.extract.documents`) and a history corpus's
targets, which leave such functions out alike."""

from __future__ import annotations

import re

__all__ = ["unindexable"]

#: PostgreSQL's longest indexable word is 2,047 bytes (riido_pg.storage.loading).
_MAX_WORD_BYTES = 2047
_LONG_RUN = re.compile(rf"\S{{{_MAX_WORD_BYTES // 4},}}")  # UTF-8: 4 bytes a char at most


def unindexable(text: str) -> bool:
    """Whether ``text`` has a whitespace-free run of more than 2,047 UTF-8 bytes (a
    cheap first look; the load leaves out what PostgreSQL's parser finds besides)."""
    return any(len(m.group().encode("utf-8")) > _MAX_WORD_BYTES for m in _LONG_RUN.finditer(text))
