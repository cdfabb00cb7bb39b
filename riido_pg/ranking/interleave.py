"""Interleaving a baseline ranking with a hint ranking (README "Ranking").

The one implementation used by the Python API, the CLI and the evaluation.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Sequence
from typing import TypeVar

__all__ = ["auxiliary_first", "baseline_first", "interleave_until", "iter_interleave"]

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


def interleave_until(
    first: Sequence[T], second: Sequence[T], targets: Container[T]
) -> tuple[int, list[T]]:
    """The 1-based rank of the first item of ``targets`` in ``iter_interleave(first,
    second)`` and the items ranked before it, in order: the same walk without a
    generator step per item (the evaluation's interleaved first-target ranks and
    inspection costs). Raises ValueError when no target is in the interleave."""
    seen: set[T] = set()
    emitted: list[T] = []
    n, m = len(first), len(second)
    i = j = 0
    take_first = True
    while i < n or j < m:
        if (take_first and i < n) or j >= m:
            item = first[i]
            i += 1
        else:
            item = second[j]
            j += 1
        if item in seen:
            continue
        if item in targets:
            return len(emitted) + 1, emitted
        seen.add(item)
        emitted.append(item)
        take_first = not take_first
    raise ValueError("no target in the ranking")


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
