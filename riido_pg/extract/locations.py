"""Where an extracted function is, told from its id and its text alone.

The database keeps a document's id and text, not the extraction's metadata, so a
search answer finds a function's file and lines again here. The id is
``PATH:QUALNAME:LINE`` (``#N`` appended to the N-th function of a file with the same
qualified name and line, :func:`function_id`): PATH and LINE, the line of the
function's name, come from it exactly. The last line is LINE plus the text's lines
after the name's line; that line is found in the text as the first line naming the
function that is not a comment, decorator or attribute line, nor inside the brackets
a decorator or attribute opened (the leading block the extraction keeps above a
definition). The misses seen are a name bound to a wrapped function expression
(``const f = memoize(function () {...})``, whose LINE is the expression's) and a
name on a comment's line, where the last line comes out a few lines late.

An id that is not an extraction id (a BEIR corpus's ``doc42``) has no location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Location", "function_id", "locate"]

_ID = re.compile(r"(?P<path>.+):(?P<qualname>[^:\n]+):(?P<line>[1-9][0-9]*)(?:#[1-9][0-9]*)?")
#: Lines of a definition's leading block: comments, decorators, attributes.
_LEADING = ("@", "#", "//", "/*", "*", "--")
#: Where a decorator or an attribute starts (its arguments may run over several lines).
_DECORATION = ("@", "#[")
_WORD = re.compile(r"[\w$]+")
_STRING = re.compile(r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'""")


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


def _depth(line: str) -> int:
    """Brackets ``line`` opens less those it closes, outside its string literals."""
    code = _STRING.sub("", line)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _name_offset(name: str, lines: list[str]) -> int:
    # a word as a whole word; an operator's name (operator+, []=) as it is written
    word = _WORD.fullmatch(name)
    named = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])" if word else re.escape(name))
    open_ = 0  # brackets a decorator or attribute left open: its arguments go on
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if open_ > 0 or stripped.startswith(_DECORATION):
            open_ = max(open_, 0) + _depth(line)
            continue
        if not stripped.startswith(_LEADING) and named.search(line):
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
