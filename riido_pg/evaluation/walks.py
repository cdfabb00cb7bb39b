"""The interleaved policies' first-target walks for a batch of questions at once.

:func:`riido_pg.ranking.interleave.interleave_until` walks two lists item by item,
keeping a set of the items placed and a list of them. The evaluation needs, per
question, only the first target's rank and which documents are placed above it (for
the inspection cost), so :class:`Pair` walks positions instead: with each
list's items distinct (repeats within a list dropped first: a later repeat is always
skipped, as the item is placed by then or the walk has stopped), the items placed
when the walk stops are exactly ``first[:i]`` and ``second[:j]`` for the two pointers
``i`` and ``j`` (everything a pointer passed was placed or skipped as placed), and an
item of one list is already placed exactly when its position in the other list is
below that list's pointer. The positions and the target flags are computed for the
whole batch in numpy; the walk left in Python compares integers, and the documents
above each first target (and so the rank: 1 + how many) are the union of the two
prefixes, computed in numpy afterwards. The result equals ``interleave_until``'s
(tests/test_interleave.py compares them on random lists).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Pair", "Walks"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Walks:
    """Per question: the first target's rank in the interleave (0 where no target
    is in it), and per entry of each (flat) list, whether it is placed above that
    question's first target (each document once: one that both lists hold before
    their pointers is marked in the leading list's)."""

    ranks: IntArray
    first_above: BoolArray
    second_above: BoolArray


class Pair:
    """Two lists per question, prepared once for walks with either one leading:
    question q's lists are ``first[first_starts[q]:first_starts[q + 1]]`` and the
    same of ``second`` (ids in ``range(n_ids)``), its targets the ``target_ids``
    whose ``target_rows`` is q. :meth:`walk` gives per question what
    ``interleave_until(lead, follow, targets)`` gives."""

    def __init__(
        self,
        first: IntArray,
        first_starts: IntArray,
        second: IntArray,
        second_starts: IntArray,
        target_rows: IntArray,
        target_ids: IntArray,
        n_ids: int,
    ) -> None:
        n_rows = len(first_starts) - 1
        self.sizes = (len(first), len(second))
        self.n_rows = n_rows
        cells = n_rows * n_ids
        a_rows, b_rows = _rows(first_starts), _rows(second_starts)
        a_key = a_rows * n_ids + first
        b_key = b_rows * n_ids + second
        # per entry of each list: its index in the other list (flat), or past the
        # end of both when the other list does not hold it
        # (above every index the walk's pointers take: the lists' entries and a slot
        # after each row)
        self.absent = absent = len(a_key) + len(b_key) + n_rows + 1
        # (int32 where it fits: half the memory written for the batch's cells)
        where: npt.NDArray[np.int64] | npt.NDArray[np.int32] = (
            np.full(cells, absent, dtype=np.int32)
            if absent < 2**31
            else np.full(cells, absent, dtype=np.int64)
        )
        where[b_key] = np.arange(len(b_key), dtype=np.int64)
        b_keep = _first_occurrences(where, b_key)
        in_b = where[a_key]
        where[b_key] = absent
        where[a_key] = np.arange(len(a_key), dtype=np.int64)
        a_keep = _first_occurrences(where, a_key)
        in_a = where[b_key]
        if not (a_keep is None and b_keep is None):
            # a later repeat of an id in its own list is skipped whenever the walk
            # reaches it (the id is placed by then), so the lists are walked without
            # them; positions are then counted in the shortened lists
            a_kept = np.ones(len(a_key), dtype=bool) if a_keep is None else a_keep
            b_kept = np.ones(len(b_key), dtype=bool) if b_keep is None else b_keep
            a_new = np.cumsum(a_kept) - 1
            b_new = np.cumsum(b_kept) - 1
            absent = self.absent = int(a_kept.sum() + b_kept.sum()) + n_rows + 1
            in_b = np.append(b_new, absent)[np.minimum(in_b, len(b_key))]
            in_a = np.append(a_new, absent)[np.minimum(in_a, len(a_key))]
            in_b, in_a = in_b[a_kept], in_a[b_kept]
            a_key, b_key = a_key[a_kept], b_key[b_kept]
            a_rows, b_rows = a_rows[a_kept], b_rows[b_kept]
        self.kept = (
            np.flatnonzero(a_keep) if a_keep is not None else None,
            np.flatnonzero(b_keep) if b_keep is not None else None,
        )
        self.rows = (a_rows, b_rows)
        self.starts = (_starts(a_rows, n_rows), _starts(b_rows, n_rows))
        self.other = (in_b, in_a)
        # The walk reads one number per entry: where the other list holds it (its
        # index there, the lists laid out with one slot after each row's entries),
        # or ``absent``; a target never is placed before the walk stops (placing it
        # stops the walk), so it reads ``absent + 1``; the slot after a row, ``absent
        # + 2``.
        is_target = np.zeros(cells, dtype=bool)
        is_target[target_rows * n_ids + target_ids] = True
        self.coded = (
            _laid_out(in_b, a_rows, is_target[a_key], n_rows, absent),
            _laid_out(in_a, b_rows, is_target[b_key], n_rows, absent),
        )

    def walk(self, first_leads: bool = True) -> Walks:
        """The walks with the first list leading (or the second)."""
        x, y = (0, 1) if first_leads else (1, 0)
        row = np.arange(self.n_rows, dtype=np.int64)
        stop_x, stop_y, found = _walk(
            self.coded[x],
            self.coded[y],
            self.absent + 1,
            (self.starts[x][:-1] + row).tolist(),
            (self.starts[y][:-1] + row).tolist(),
        )
        stops = [np.zeros(0, dtype=np.int64)] * 2
        stops[x] = np.asarray(stop_x, dtype=np.int64) - row
        stops[y] = np.asarray(stop_y, dtype=np.int64) - row
        # placed: the leading list's entries before its pointer, and the other's
        # entries before its own pointer that the leading list's part does not hold
        placed = [np.zeros(0, dtype=bool)] * 2
        for side in (x, y):
            rows = self.rows[side]
            placed[side] = np.arange(len(rows), dtype=np.int64) < stops[side][rows]
        rows_y = self.rows[y]
        placed[y] &= self.other[y] >= stops[x][rows_y]
        counts = sum(
            np.bincount(self.rows[side][placed[side]], minlength=self.n_rows) for side in (0, 1)
        )
        ranks = np.where(np.asarray(found, dtype=bool), counts + 1, 0)
        above = []
        for side in (0, 1):
            kept = self.kept[side]
            if kept is None:
                above.append(placed[side])
            else:
                full = np.zeros(self.sizes[side], dtype=bool)
                full[kept[placed[side]]] = True
                above.append(full)
        return Walks(ranks, above[0], above[1])


def _laid_out(
    other: IntArray, rows: IntArray, target: BoolArray, n_rows: int, absent: int
) -> list[int]:
    """One list's entries as the walk reads them (see :class:`Pair`): row r's
    entries shifted by r, for the slot after each earlier row (an index in the other
    list too, as the entry and its place there share a row)."""
    code = np.where(target, absent + 1, np.where(other < absent, other + rows, absent))
    out = np.full(len(rows) + n_rows, absent + 2, dtype=np.int64)
    out[np.arange(len(rows), dtype=np.int64) + rows] = code
    return out.tolist()


def _rows(starts: IntArray) -> IntArray:
    return np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))


def _starts(rows: IntArray, n_rows: int) -> IntArray:
    starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    return starts


def _first_occurrences(
    where: npt.NDArray[np.int64] | npt.NDArray[np.int32], key: IntArray
) -> BoolArray | None:
    """Per entry of a list whose flat indices were just written to ``where`` at its
    keys: is it its key's first occurrence? None when every key occurs once (then
    every entry read its own index back)."""
    index = np.arange(len(key), dtype=where.dtype)
    if np.array_equal(where[key], index):
        return None
    keep = np.zeros(len(key), dtype=bool)
    keep[np.unique(key, return_index=True)[1]] = True
    # ``where`` must name each key's first occurrence for the other list to read
    first = np.flatnonzero(keep)
    where[key[first]] = first
    return keep


def _walk(
    in_b: list[int], in_a: list[int], target: int, a_starts: list[int], b_starts: list[int]
) -> tuple[list[int], list[int], list[bool]]:
    """Per row, the two pointers when the walk reaches its first target (or runs
    out), and whether it found one. An entry of the first list is placed already
    when its index in the second (``in_b``) is below the second's pointer, and the
    other way round; a target's entry holds ``target``, the slot after a row's
    entries ``target + 1`` (see :class:`Pair`)."""
    stop_i: list[int] = []
    stop_j: list[int] = []
    found: list[bool] = []
    for i, j in zip(a_starts, b_starts, strict=True):
        hit = False
        while True:
            at = in_b[i]  # the first list's turn: skipping a placed entry keeps it
            while at < j:
                i += 1
                at = in_b[i]
            if at >= target:
                if at != target:  # the first list ran out: the rest of the second follows
                    j, at = _rest(in_a, j, target)
                hit = at == target
                break
            i += 1
            at = in_a[j]  # the second list's turn
            while at < i:
                j += 1
                at = in_a[j]
            if at >= target:
                if at != target:  # the second list ran out: the rest of the first follows
                    i, at = _rest(in_b, i, target)
                hit = at == target
                break
            j += 1
        stop_i.append(i)
        stop_j.append(j)
        found.append(hit)
    return stop_i, stop_j, found


def _rest(codes: list[int], k: int, target: int) -> tuple[int, int]:
    """The other list ran out: this one's entries follow from ``k`` (the placed ones
    skipped) up to a target or its row's end: where it stopped, and what it read."""
    at = codes[k]
    while at != target and at != target + 1:
        k += 1
        at = codes[k]
    return k, at
