"""Ranking: the policy registry and its policy modules (:mod:`riido_pg.ranking.policy`),
query terms, BM25 in SQL, interleaving."""

from riido_pg.ranking.interleave import auxiliary_first, baseline_first, iter_interleave
from riido_pg.ranking.policies import (
    BM25,
    EXTERNAL_HINTS_BASELINE_FIRST,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    MODEL_HINTS_BASELINE_FIRST,
    MODEL_STRUCTURE_WEIGHTED,
    OUT_OF_SCOPE,
    Policy,
    evaluated_policies,
    get_policy,
    policies,
    register_policy,
    resolve,
    select_policy,
)
from riido_pg.ranking.rank import Candidate, Ranking, rank_documents, rank_snapshot
from riido_pg.ranking.terms import QueryTerms, query_terms

__all__ = [
    "BM25",
    "EXTERNAL_HINTS_BASELINE_FIRST",
    "IDENTIFIER_BM25",
    "IDENTIFIER_BM25_AUXILIARY_FIRST",
    "IDENTIFIER_BM25_BASELINE_FIRST",
    "IDENTIFIER_BM25_FUSED",
    "IDENTIFIER_BM25_RRF",
    "MODEL_HINTS_BASELINE_FIRST",
    "MODEL_STRUCTURE_WEIGHTED",
    "OUT_OF_SCOPE",
    "Candidate",
    "Policy",
    "QueryTerms",
    "Ranking",
    "auxiliary_first",
    "baseline_first",
    "evaluated_policies",
    "get_policy",
    "iter_interleave",
    "policies",
    "query_terms",
    "rank_documents",
    "rank_snapshot",
    "register_policy",
    "resolve",
    "select_policy",
]
