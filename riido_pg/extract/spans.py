"""Which function of a file holds a line: the rule that maps a diff's lines to
functions, for a history corpus's targets (:mod:`riido_pg.corpora.history.targets`)
and a revision's recently changed functions (:mod:`riido_pg.extract.recent`).

* a function's lines run from the first line of its document text (its leading
  comments, decorators or annotations) to its ``end_line``;
* a changed line counts for the **innermost** function containing it (the one
  starting last; its enclosing function is not counted for that line);
* an insertion after line ``a`` counts for the innermost function that contains both
  line ``a`` and line ``a + 1`` (new lines just above a function's first line or just
  below its last are not in it).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from riido_pg.extract.model import Function

__all__ = ["Span", "function_spans", "innermost", "touched"]


@dataclass(frozen=True, slots=True)
class Span:
    """A function's lines, 1-based and inclusive."""

    first: int
    last: int
    function: Function


def _first_line(function: Function) -> int:
    text = function.text[:-1] if function.text.endswith("\n") else function.text
    first = function.metadata["end_line"] - text.count("\n")
    return min(first, function.metadata["start_line"])


def function_spans(functions: Iterable[Function]) -> list[Span]:
    """The spans of a file's functions, sorted by first line (outer before inner)."""
    spans = [Span(_first_line(f), f.metadata["end_line"], f) for f in functions]
    spans.sort(key=lambda s: (s.first, -s.last))
    return spans


def innermost(
    spans: Sequence[Span],
    firsts: Sequence[int],
    low: int,
    high: int,
    keep: Callable[[Span], bool],
) -> Span | None:
    """The innermost span containing lines ``low`` … ``high`` among those ``keep``
    accepts (``firsts``: the spans' first lines, for bisection)."""
    i = bisect.bisect_right(firsts, low)
    while i > 0:
        i -= 1
        span = spans[i]
        if span.last >= high and keep(span):
            return span
    return None


def touched(
    spans: Sequence[Span],
    lines: Sequence[int],
    insertions: Sequence[int],
    keep: Callable[[Span], bool],
) -> Iterator[Span]:
    """For each changed line of ``lines`` and each line of ``insertions`` that lines
    were inserted after (or removed after), the innermost of ``spans`` (sorted:
    :func:`function_spans`) holding it among those ``keep`` accepts (the module
    docstring's rules), in that order."""
    firsts = [s.first for s in spans]
    probes = [(line, line) for line in lines]
    probes += [(after, after + 1) for after in insertions]
    for low, high in probes:
        span = innermost(spans, firsts, low, high, keep)
        if span is not None:
            yield span
