"""Interleaving a baseline ranking with a hint ranking (README "Ranking").

The one implementation used by the Python API, the CLI and the evaluation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["auxiliary_first", "baseline_first", "iter_interleave"]

T = TypeVar("T")


def iter_interleave(first: Sequence[T], second: Sequence[T]) -> Iterator[T]:
    """Alternate ``first`` and ``second``, ``first`` leading, skipping ids already
    emitted; when one list runs out the rest of the other follows.

    Lazy, so a caller that needs only a prefix (the first K, the first target) pays
    only for that prefix.
    """
    seen: set[T] = set()
    i = j = 0
    take_first = True
    while i < len(first) or j < len(second):
        if take_first and i < len(first):
            item = first[i]
            i += 1
        elif j < len(second):
            item = second[j]
            j += 1
        else:
            item = first[i]
            i += 1
        if item in seen:
            continue  # a skipped id does not use up its list's turn
        seen.add(item)
        take_first = not take_first
        yield item


def _check(baseline: Sequence[T], hints: Sequence[T]) -> None:
    members = set(baseline)
    if len(members) != len(baseline):
        raise ValueError("baseline has duplicate ids")
    for item in hints:
        if item not in members:
            raise ValueError(f"hint {item!r} is not in the baseline")


def baseline_first(baseline: Sequence[T], hints: Sequence[T]) -> list[T]:
    """Interleave with the baseline leading: its first id stays first, and the id at
    baseline rank r appears by rank min(n, 2r - 1)."""
    _check(baseline, hints)
    return list(iter_interleave(baseline, hints))


def auxiliary_first(baseline: Sequence[T], hints: Sequence[T]) -> list[T]:
    """Interleave with the hints leading; the id at baseline rank r appears by rank
    min(n, 2r)."""
    _check(baseline, hints)
    return list(iter_interleave(hints, baseline))
