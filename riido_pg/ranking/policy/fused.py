"""``identifier_bm25_fused``: one ranking by ``bm25 + w * identifier_bm25``; a
document whose fused score is 0 ranks with the unmatched ones.

Parameter ``weight`` (w; ``--fused-weight``, ``fused_weight=``, ``params=``), reported
as ``config.fused_weight`` by ``eval``."""

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

__all__ = ["FUSED_WEIGHT", "IDENTIFIER_BM25_FUSED", "PARAMS", "POLICIES", "WEIGHT", "Fused"]

IDENTIFIER_BM25_FUSED = "identifier_bm25_fused"
#: w of identifier_bm25_fused: a constant chosen on the development corpora (cosqa-dev
#: and docproxy, README "Choosing the fused weight"), not learned per snapshot.
FUSED_WEIGHT = 4.0
#: The parameter's name (``params={"weight": w}``).
WEIGHT = "weight"

PARAMS = (Param(WEIGHT, FUSED_WEIGHT, AT_LEAST_ZERO, "the fused weight", config="fused_weight"),)


class Fused(Scored):
    """``bm25 + w * identifier_bm25``."""

    lists = (RAW, IDENT)
    score_name = "fused_score"
    params = PARAMS

    def __init__(self, weight: float = FUSED_WEIGHT) -> None:
        super().__init__(weight=weight)

    def fragment(self, terms: QueryTerms) -> Fragment:
        score = sql.SQL("{} + {} * {}").format(value(RAW), param(WEIGHT), value(IDENT))
        return Fragment((RAW, IDENT), score)

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        raw, ident = (batch.scores[c] / bm25.SCALE for c in COLUMNS)
        fused = (raw + self[WEIGHT] * ident).tocsr()
        fused.eliminate_zeros()  # a zero fused score ranks with the unmatched documents
        return fused


POLICIES = (
    Policy(
        IDENTIFIER_BM25_FUSED,
        Fused(),
        f"one ranking by bm25 + w * identifier_bm25 (w = {FUSED_WEIGHT:g})",
    ),
)
