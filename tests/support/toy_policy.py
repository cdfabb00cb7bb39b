"""A policy module written the way docs/how-it-works.md "How to add a policy" says,
to show that adding one is this module and its oracle (tests/test_policy_module.py):
``identifier_bm25_max`` ranks by the greater of bm25 and w * identifier_bm25.

Nothing else in the package names it: the registry, ``rank_snapshot``, ``hints`` and
``eval`` take it through the skeleton's protocols alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

from riido_pg.ranking import bm25
from riido_pg.ranking.policy.skeleton import (
    AT_LEAST_ZERO,
    COLUMNS,
    IDENT,
    RAW,
    EvalScores,
    Fragment,
    Param,
    Policy,
    Scored,
    param,
    value,
)
from riido_pg.ranking.terms import QueryTerms

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["NAME", "POLICY", "Max", "W"]

NAME = "identifier_bm25_max"
W = "w"


class Max(Scored):
    """``greatest(bm25, w * identifier_bm25)``."""

    lists = (RAW, IDENT)
    score_name = "max_score"
    params = (Param(W, 1.0, AT_LEAST_ZERO, "the max weight"),)

    def __init__(self, w: float = 1.0) -> None:
        super().__init__(w=w)

    def fragment(self, terms: QueryTerms) -> Fragment:
        score = sql.SQL("greatest({}, {} * {})").format(value(RAW), param(W), value(IDENT))
        return Fragment((RAW, IDENT), score)

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        raw, ident = (batch.scores[c] / bm25.SCALE for c in COLUMNS)
        best = raw.maximum(self[W] * ident).tocsr()
        best.eliminate_zeros()
        return best


POLICY = Policy(NAME, Max(), "the greater of bm25 and w * identifier_bm25 (w = 1)")
