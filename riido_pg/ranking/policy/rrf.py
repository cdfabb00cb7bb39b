"""``identifier_bm25_rrf``: reciprocal rank fusion of bm25 and identifier_bm25: a
document scores 1 / (k + its rank) in each column that matches it, summed; documents
neither column matches follow with score 0, in id order. Every match needs its rank
(the fusion cannot stop early at a top K).

Parameter ``k``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

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
    rank,
)
from riido_pg.ranking.terms import QueryTerms

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["IDENTIFIER_BM25_RRF", "PARAMS", "POLICIES", "RRF_K", "K", "ReciprocalRank"]

IDENTIFIER_BM25_RRF = "identifier_bm25_rrf"
#: k of identifier_bm25_rrf, chosen on the development corpora (cosqa-dev and
#: docproxy; docs/evaluation.md "Choosing the fused weight" has the sweep): MRR is flat
#: for k from 0 to 2 and falls beyond, so not the customary 60.
RRF_K = 1.0
K = "k"

PARAMS = (Param(K, RRF_K, AT_LEAST_ZERO, "the rrf k"),)


class ReciprocalRank(Scored):
    """``1 / (k + rank in bm25) + 1 / (k + rank in identifier_bm25)``, each term only
    for a list the document is matched in."""

    lists = (RAW, IDENT)
    score_name = "rrf_score"
    params = PARAMS

    def __init__(self, k: float = RRF_K) -> None:
        super().__init__(k=k)

    @property
    def k(self) -> float:
        return self[K]

    def fragment(self, terms: QueryTerms) -> Fragment:
        term = sql.SQL("coalesce(1::float8 / ({} + {}), 0::float8)")
        score = sql.SQL("{} + {}").format(
            term.format(param(K), rank(RAW)), term.format(param(K), rank(IDENT))
        )
        return Fragment((RAW, IDENT), score, ranked=True)

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        raw, ident = (batch.reciprocal_ranks(c, self.k) for c in COLUMNS)
        return (raw + ident).tocsr()


POLICIES = (
    Policy(
        IDENTIFIER_BM25_RRF,
        ReciprocalRank(),
        f"reciprocal rank fusion of bm25 and identifier_bm25 (k = {RRF_K:g})",
    ),
)
