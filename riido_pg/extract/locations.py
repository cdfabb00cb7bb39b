"""Where an extracted function is, told from its id and its text alone.

The database keeps a document's id and text, not the extraction's metadata, so a
search answer finds a function's file and lines again here. The id is
``PATH:QUALNAME:LINE`` (``#N`` appended to the N-th function of a file with the same
qualified name and line, :func:`function_id`): PATH and LINE, the line of the
function's name, come from it exactly. The last line is LINE plus the text's lines
after the name's line; that line is found in the text as the first line naming the
function that is not a comment, decorator or attribute line (the leading block the
extraction keeps above a definition). The one miss seen is a name bound to a wrapped
function expression (``const f = memoize(function () {...})``, whose LINE is the
expression's), where the last line comes out a line or two late.

An id that is not an extraction id (a BEIR corpus's ``doc42``) has no location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Location", "function_id", "locate"]

_ID = re.compile(r"(?P<path>.+):(?P<qualname>[^:\n]+):(?P<line>[1-9][0-9]*)(?:#[1-9][0-9]*)?")
#: Lines of a definition's leading block: comments, decorators, attributes.
_LEADING = ("@", "#", "//", "/*", "*", "--")
_WORD = re.compile(r"[\w$]+")


@dataclass(frozen=True, slots=True)
class Location:
    """A function's file, the line of its name and its last line (1-based), and
    ``offset``: which line of its text is the name's (0: the first)."""

    path: str
    start_line: int
    end_line: int
    offset: int


def function_id(path: str, qualname: str, line: int, count: int = 1) -> str:
    """The id of the ``count``-th function of ``path`` named ``qualname`` on ``line``."""
    doc_id = f"{path}:{qualname}:{line}"
    return f"{doc_id}#{count}" if count > 1 else doc_id


def _name_offset(name: str, lines: list[str]) -> int:
    # a word as a whole word; an operator's name (operator+, []=) as it is written
    named = re.compile(
        rf"(?<![\w$]){re.escape(name)}(?![\w$])" if _WORD.fullmatch(name) else re.escape(name)
    )
    for i, line in enumerate(lines):
        if not line.lstrip().startswith(_LEADING) and named.search(line):
            return i
    return 0


def locate(doc_id: str, text: str) -> Location | None:
    """The location of the extracted function ``doc_id`` whose text is ``text``, or
    None when ``doc_id`` is not an extraction id."""
    match = _ID.fullmatch(doc_id)
    if match is None:
        return None
    line = int(match["line"])
    body = text[:-1] if text.endswith("\n") else text
    lines = body.split("\n")
    offset = _name_offset(match["qualname"].rsplit(".", 1)[-1], lines)
    return Location(match["path"], line, line + len(lines) - 1 - offset, offset)
