"""Single-list policies: one column's BM25 ranking as it is (``bm25``, the default,
and ``identifier_bm25``). No parameters."""

from __future__ import annotations

from riido_pg.ranking.policy.skeleton import (
    COLUMNS,
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

__all__ = ["BM25", "IDENTIFIER_BM25", "POLICIES", "Single"]

BM25 = "bm25"
IDENTIFIER_BM25 = "identifier_bm25"


class Single(Base):
    """One list's ranking as it is."""

    def __init__(self, column: str) -> None:
        if column not in COLUMNS:
            raise ValueError(f"a single list is a column ({', '.join(COLUMNS)}), not {column!r}")
        super().__init__()
        self.lists = (column,)

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        return (yield from column_rows(given, self.lists[0]))

    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self.lists[0], i)

    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]:
        return batch.order(self.lists[0], i, depth)

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        col = self.lists[0]
        return batch.rank_of_first(col, i), batch.cost_above(col, i)


POLICIES = (
    Policy(BM25, Single(RAW), "BM25 over the raw column (the default)"),
    Policy(IDENTIFIER_BM25, Single(IDENT), "BM25 over the identifier-split column alone"),
)
