"""``structure_bm25``: one ranking by ``(bm25 + w_ident * identifier_bm25 + w_name *
name_bm25) * prior`` (README "Ranking with structure"). The name field is BM25 with
b = 0 of the identifier-split query against each document's name (its path and
qualified name, :mod:`riido_pg.fields`), and the prior is the least of
``test_prior`` for a test document (kind ``test``) unless the question is about
tests, ``example_prior`` for documentation, example or benchmark code (kind
``example``) unless the question is about those, and 1. A document whose score is 0
ranks with the unmatched ones.

Parameters ``w_ident``, ``w_name``, ``test_prior``, ``example_prior``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psycopg import sql

from riido_pg.ranking import bm25
from riido_pg.ranking.policy.skeleton import (
    AT_LEAST_ZERO,
    IDENT,
    NAME,
    RAW,
    UNIT_INTERVAL,
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

__all__ = [
    "PARAMS",
    "POLICIES",
    "STRUCTURE_BM25",
    "STRUCTURE_EXAMPLE_PRIOR",
    "STRUCTURE_TEST_PRIOR",
    "STRUCTURE_W_IDENT",
    "STRUCTURE_W_NAME",
    "Structure",
]

STRUCTURE_BM25 = "structure_bm25"
#: structure_bm25's constants, chosen on the development corpora only (cosqa-dev,
#: docproxy and the history corpora of docs/evaluation.md "Ranking with structure";
#: bench/structure.py has the sweep): the identifier column's weight, the name
#: field's weight, the factor of a test document's score when the question is not
#: about tests, and that of documentation, example or benchmark code when the
#: question is not about those.
STRUCTURE_W_IDENT = 6.0
STRUCTURE_W_NAME = 6.0
STRUCTURE_TEST_PRIOR = 0.3
STRUCTURE_EXAMPLE_PRIOR = 0.5

PARAMS = (
    Param("w_ident", STRUCTURE_W_IDENT, AT_LEAST_ZERO, "the identifier column's weight"),
    Param("w_name", STRUCTURE_W_NAME, AT_LEAST_ZERO, "the name field's weight"),
    Param("test_prior", STRUCTURE_TEST_PRIOR, UNIT_INTERVAL, "the test prior"),
    Param("example_prior", STRUCTURE_EXAMPLE_PRIOR, UNIT_INTERVAL, "the example prior"),
)

#: Each document of kind test or example with its prior: the least factor of its
#: kinds (the removed documents included: only documents the snapshot holds are
#: looked up).
_KINDS = sql.SQL(
    "kinds AS MATERIALIZED (\n"
    "    SELECT x.doc_ord,\n"
    "           min(CASE x.kind WHEN 'test' THEN {test}\n"
    "                           ELSE {example} END) AS prior\n"
    "    FROM ({kinds}) AS x\n"
    "    WHERE x.kind IN ('test', 'example')\n"
    "    GROUP BY x.doc_ord\n"
    ")"
).format(test=param("test_prior"), example=param("example_prior"), kinds=bm25.KINDS)


class Structure(Scored):
    """The body's two columns and the name field, weighted, times the prior."""

    lists = (RAW, IDENT, NAME)
    score_name = "structure_score"
    params = PARAMS

    def __init__(
        self,
        w_ident: float = STRUCTURE_W_IDENT,
        w_name: float = STRUCTURE_W_NAME,
        test_prior: float = STRUCTURE_TEST_PRIOR,
        example_prior: float = 1.0,
    ) -> None:
        super().__init__(
            w_ident=w_ident, w_name=w_name, test_prior=test_prior, example_prior=example_prior
        )

    @property
    def w_ident(self) -> float:
        return self["w_ident"]

    @property
    def w_name(self) -> float:
        return self["w_name"]

    @property
    def test_prior(self) -> float:
        return self["test_prior"]

    @property
    def example_prior(self) -> float:
        return self["example_prior"]

    def priors(self, terms: QueryTerms) -> tuple[float, float]:
        """The factors of a test and of an example document's score for these query
        terms (1 for a kind the question is about)."""
        return (
            1.0 if terms.about_tests else self.test_prior,
            1.0 if terms.about_examples else self.example_prior,
        )

    def bound(self, terms: QueryTerms) -> dict[str, float]:
        test_prior, example_prior = self.priors(terms)
        return {**self.values, "test_prior": test_prior, "example_prior": example_prior}

    def fragment(self, terms: QueryTerms) -> Fragment:
        score = sql.SQL("({} + {} * {} + {} * {}) * coalesce(t.prior, 1::float8)").format(
            value(RAW), param("w_ident"), value(IDENT), param("w_name"), value(NAME)
        )
        return Fragment((RAW, IDENT, NAME), score, ctes=(_KINDS,), joins=(("kinds", "t"),))

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        import numpy as np

        raw, ident, name = (batch.scores[c] / bm25.SCALE for c in self.lists)
        summed = (raw + self.w_ident * ident + self.w_name * name).tocsr()
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        prior = np.ones(summed.nnz)
        kinds = (
            (batch.test_docs, batch.about_tests, self.test_prior),
            (batch.example_docs, batch.about_examples, self.example_prior),
        )
        for docs, about, factor in kinds:
            if docs is not None and about is not None:
                demote = docs[summed.indices] & ~about[rows]
                prior = np.where(demote, np.minimum(prior, factor), prior)
        summed.data = summed.data * prior  # the SQL's one product (x * 1.0 is x)
        summed.eliminate_zeros()  # a zero score ranks with the unmatched documents
        return summed


POLICIES = (
    Policy(
        STRUCTURE_BM25,
        Structure(
            STRUCTURE_W_IDENT, STRUCTURE_W_NAME, STRUCTURE_TEST_PRIOR, STRUCTURE_EXAMPLE_PRIOR
        ),
        f"bm25 + {STRUCTURE_W_IDENT:g} * identifier_bm25 + {STRUCTURE_W_NAME:g} * name_bm25, "
        f"test code x {STRUCTURE_TEST_PRIOR:g} unless the question is about tests, "
        f"documentation and example code x {STRUCTURE_EXAMPLE_PRIOR:g} unless it is about them",
    ),
)
