"""The one reader of JSON a user hands over: ``.json`` and ``.jsonl`` documents, the
``hints`` request and hint lists, BEIR corpora and history corpora.

Every way a text can fail to be usable JSON is one :class:`~riido_pg.errors.InvalidInput`
(or the subclass the caller names) saying where: malformed JSON, nesting deeper than
:data:`MAX_DEPTH` levels (the parser's recursion, and every later walk over the value,
stay bounded), and an integer longer than the interpreter converts (4,300 digits by
default, ``sys.get_int_max_str_digits()``). Never a ``RecursionError`` or a bare
``ValueError``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from riido_pg.errors import InvalidInput

__all__ = ["MAX_DEPTH", "read_json"]

#: The deepest nesting of arrays and objects accepted (``[]`` is one level).
MAX_DEPTH = 100


def read_json(
    text: str,
    where: str,
    *,
    error: type[InvalidInput] = InvalidInput,
    one_line: bool = False,
) -> Any:
    """The JSON value of ``text``, or ``error`` naming ``where`` (and, unless the text is
    ``one_line`` of a file whose ``where`` names the line already, the line)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        line = "" if one_line else f" line {exc.lineno}:"
        raise error(f"{where}:{line} malformed JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise error(_too_deep(where)) from exc
    except ValueError as exc:  # int(): more digits than sys.get_int_max_str_digits()
        digits = sys.get_int_max_str_digits()
        raise error(f"{where}: a JSON integer has more than {digits:,} digits") from exc
    if _may_nest_deeper(text, MAX_DEPTH) and _deeper_than(value, MAX_DEPTH):
        raise error(_too_deep(where))
    return value


def _may_nest_deeper(text: str, limit: int) -> bool:
    """False when the JSON ``text`` cannot nest more than ``limit`` levels: each level
    opens with a ``[`` or ``{`` of its own in the text, so fewer of those than the limit
    (counted in C, strings included) need no walk over the value -- most of a ``.jsonl``
    file's lines, whose walk cost as much as their parse."""
    return text.count("[") + text.count("{") > limit


def _too_deep(where: str) -> str:
    return f"{where}: JSON nested more than {MAX_DEPTH} levels deep"


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``value`` (a walk
    without recursion; a number, string, boolean or null nests none)."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
