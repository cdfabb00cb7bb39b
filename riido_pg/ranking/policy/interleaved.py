"""Interleaved policies: two lists alternated, the first one's document first,
skipping documents already placed (README "Ranking"): ``identifier_bm25_baseline_first``
(the control) and ``identifier_bm25_auxiliary_first``. The interleave of a column with
a hint list is :mod:`riido_pg.ranking.policy.hinted`'s. No parameters."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from riido_pg.ranking.interleave import interleave_until, iter_interleave
from riido_pg.ranking.policy.skeleton import (
    COLUMNS,
    HINTS,
    IDENT,
    RAW,
    Base,
    EvalScores,
    Policy,
    RankInput,
    Row,
    column_rows,
)
from riido_pg.server.plans import Plan

__all__ = [
    "IDENTIFIER_BM25_AUXILIARY_FIRST",
    "IDENTIFIER_BM25_BASELINE_FIRST",
    "POLICIES",
    "Interleave",
]

IDENTIFIER_BM25_BASELINE_FIRST = "identifier_bm25_baseline_first"
IDENTIFIER_BM25_AUXILIARY_FIRST = "identifier_bm25_auxiliary_first"


class Interleave(Base):
    """Alternate two lists, the first one's document first, skipping documents
    already placed: baseline-first when the first is ``raw``."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__()
        self.lists = (first, second)

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        found: dict[int, Row] = {}
        orders: list[Sequence[int]] = []
        for name in self.lists:
            if name in COLUMNS:
                rows = yield from column_rows(given, name)
                for row in rows:
                    known = found.setdefault(row.doc_ord, row)
                    if known is not row:
                        known.raw = known.raw if known.raw is not None else row.raw
                        known.ident = known.ident if known.ident is not None else row.ident
                orders.append([r.doc_ord for r in rows])
            else:
                orders.append(list((given.hints if name == HINTS else given.model) or ()))
        merged = iter_interleave(orders[0], orders[1])
        ords = list(merged if given.limit is None else islice(merged, given.limit))
        return [found.get(o) or Row(o) for o in ords]

    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int:
        if all(name in COLUMNS for name in self.lists):
            return batch.interleaved(self.lists[0], self.lists[1], i)[0]
        first, second = (batch.prefix(name, i) for name in self.lists)
        return interleave_until(first, second, targets)[0]

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        """One walk of the two prefixes: the rank, and the documents above it (two
        columns: every question of the batch walked at once)."""
        if all(name in COLUMNS for name in self.lists):
            return batch.interleaved(self.lists[0], self.lists[1], i)
        first, second = (batch.prefix(name, i) for name in self.lists)
        rank, above = interleave_until(first, second, targets)
        return rank, batch.cost_of(above)

    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]:
        first, second = (batch.order(name, i, depth) for name in self.lists)
        return list(islice(iter_interleave(first, second), depth))


POLICIES = (
    Policy(
        IDENTIFIER_BM25_BASELINE_FIRST,
        Interleave(RAW, IDENT),
        "interleave bm25 (first) with identifier_bm25",
        flag="--identifier-hints",
    ),
    Policy(
        IDENTIFIER_BM25_AUXILIARY_FIRST,
        Interleave(IDENT, RAW),
        "interleave identifier_bm25 (first) with bm25",
    ),
)
