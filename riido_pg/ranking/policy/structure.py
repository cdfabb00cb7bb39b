"""``structure_bm25``: one ranking by ``(bm25 + w_ident * identifier_bm25 + w_name *
name_bm25) * length * match * prior`` (README "Ranking with structure"). The name field is BM25
with b = 0 of the identifier-split query against each document's name (its path and
qualified name, :mod:`riido_pg.fields`); ``match`` is ``name_match`` for a document
whose qualified name has lexemes, every one of them among the query's identifier
lexemes (``Context.invoke`` for "invoke the context"), else 1; ``length`` is
``(1 + ln(1 + len)) ^ length_prior``, ``len`` the document's length in the raw column
(its tokens, as BM25 counts them: ``riido.texts.len_raw``); the prior is the least of
``test_prior`` for a test document (kind ``test``) unless the question is about
tests, ``example_prior`` for documentation, example or benchmark code (kind
``example``) unless the question is about those, and 1; where that is 1,
``recent_prior`` for a document the snapshot's revision changed recently
(``riido.snapshots.recent``: :mod:`riido_pg.extract.recent`). A document whose score
is 0 ranks with the unmatched ones.

Parameters ``w_ident``, ``w_name``, ``test_prior``, ``example_prior``, ``name_match``,
``length_prior``, ``recent_prior``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from psycopg import sql

from riido_pg.extract.recent import RECENT_COMMITS
from riido_pg.ranking import bm25
from riido_pg.ranking.policy.skeleton import (
    AT_LEAST_ONE,
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
    import numpy as np
    import numpy.typing as npt
    import scipy.sparse as sp

__all__ = [
    "PARAMS",
    "POLICIES",
    "STRUCTURE_BM25",
    "STRUCTURE_EXAMPLE_PRIOR",
    "STRUCTURE_LENGTH_PRIOR",
    "STRUCTURE_NAME_MATCH",
    "STRUCTURE_RECENT_PRIOR",
    "STRUCTURE_TEST_PRIOR",
    "STRUCTURE_W_IDENT",
    "STRUCTURE_W_NAME",
    "Structure",
]

STRUCTURE_BM25 = "structure_bm25"
#: structure_bm25's constants, chosen on the development corpora only (cosqa-dev,
#: docproxy and the history corpora of docs/evaluation.md "Ranking with structure";
#: bench/structure.py has the sweep): the identifier column's weight, the name
#: field's weight, the factor of a document's score when the question holds every
#: lexeme of its qualified name, the factor of a test document's score when the
#: question is not about tests, that of documentation, example or benchmark code
#: when the question is not about those, the exponent of the length prior
#: (1 + ln(1 + the document's raw length)) ^ e, which lifts longer functions a little,
#: and the factor of a document its revision's last commits changed (the recency
#: prior).
STRUCTURE_W_IDENT = 6.0
STRUCTURE_W_NAME = 6.0
STRUCTURE_NAME_MATCH = 1.75
STRUCTURE_TEST_PRIOR = 0.3
STRUCTURE_EXAMPLE_PRIOR = 0.5
STRUCTURE_LENGTH_PRIOR = 0.1
STRUCTURE_RECENT_PRIOR = 1.75

PARAMS = (
    Param("w_ident", STRUCTURE_W_IDENT, AT_LEAST_ZERO, "the identifier column's weight"),
    Param("w_name", STRUCTURE_W_NAME, AT_LEAST_ZERO, "the name field's weight"),
    Param("test_prior", STRUCTURE_TEST_PRIOR, UNIT_INTERVAL, "the test prior"),
    Param("example_prior", STRUCTURE_EXAMPLE_PRIOR, UNIT_INTERVAL, "the example prior"),
    Param("name_match", STRUCTURE_NAME_MATCH, AT_LEAST_ONE, "the qualified-name match factor"),
    Param("length_prior", STRUCTURE_LENGTH_PRIOR, AT_LEAST_ZERO, "the length prior's exponent"),
    Param("recent_prior", STRUCTURE_RECENT_PRIOR, AT_LEAST_ONE, "the recency prior's factor"),
)

#: Each document of kind test or example, or recently changed, with its prior: the
#: least factor of its kinds (1 without one), or, when that is 1 and the snapshot's
#: revision changed the document recently, the recency prior's factor (a test the
#: question is not about stays as demoted, recent or not; the removed documents
#: included: only documents the snapshot holds are looked up).
_KINDS = sql.SQL(
    "kinds AS MATERIALIZED (\n"
    "    SELECT coalesce(k.doc_ord, r.doc_ord) AS doc_ord,\n"
    "           coalesce(k.prior, 1::float8)\n"
    "           * CASE WHEN r.doc_ord IS NULL OR k.prior < 1::float8 THEN 1::float8\n"
    "                  ELSE {recent} END AS prior\n"
    "    FROM (\n"
    "        SELECT x.doc_ord,\n"
    "               min(CASE x.kind WHEN 'test' THEN {test}\n"
    "                               ELSE {example} END) AS prior\n"
    "        FROM ({kinds}) AS x\n"
    "        WHERE x.kind IN ('test', 'example')\n"
    "        GROUP BY x.doc_ord\n"
    "    ) AS k\n"
    "    FULL JOIN (\n"
    "        SELECT unnest(s.recent) AS doc_ord FROM riido.snapshots AS s\n"
    "        WHERE s.snapshot_id = %(snapshot_id)s\n"
    "    ) AS r ON r.doc_ord = k.doc_ord\n"
    ")"
).format(
    test=param("test_prior"),
    example=param("example_prior"),
    recent=param("recent_prior"),
    kinds=bm25.KINDS,
)


#: The raw-column length (riido.texts.len_raw, the dl BM25 reads) of document
#: ``t.doc_ord``, as a scalar subquery: its row found as sql/doc_id.sql finds an id,
#: then one look-up on riido.texts' primary key.
_LEN = sql.SQL("({})").format(
    bm25.doc_value("x.len_raw", "JOIN riido.texts AS x ON x.key = d.text_key")
)
#: The length factor of a length ``l``, and its bound: that of the largest length a
#: document can have (len_raw is an int4), which no document's factor exceeds.
_FACTOR = sql.SQL("power(1::float8 + ln(1::float8 + {}::float8), {})")
_UPPER = _FACTOR.format(sql.Literal(2**31 - 1), param("length_prior"))

#: In one step (no name match): the length of every document a column matched.
_LENGTHS_ALL = sql.SQL(
    "lengths AS MATERIALIZED (\n"
    "    SELECT t.doc_ord, {factor} AS factor\n"
    "    FROM (SELECT doc_ord FROM scored_raw UNION SELECT doc_ord FROM scored_ident\n"
    "          UNION SELECT doc_ord FROM scored_name) AS t\n"
    ")"
).format(factor=_FACTOR.format(_LEN, param("length_prior")))


def length_factors(lengths: npt.NDArray[np.int64], exponent: float) -> npt.NDArray[np.float64]:
    """``(1 + ln(1 + len)) ^ exponent`` of each length, as PostgreSQL computes
    ``power(1 + ln(1 + len), exponent)`` in float8: the C library's log and pow, once
    per distinct length."""
    import numpy as np

    distinct, at = np.unique(lengths, return_inverse=True)
    table = np.array(
        [math.pow(1.0 + math.log(1.0 + float(n)), exponent) for n in distinct.tolist()],
        dtype=np.float64,
    )
    return table[at.reshape(-1)]


#: The k-th best score without the length prior and the match (k: the limit; none
#: without one): both only raise a score, so only a document whose score times their
#: largest factors reaches it can enter the first k, and only those have their length
#: and qualified names read (the others keep factors 1, which leaves them below it).
_BAR = sql.SQL(
    "bar AS (\n"
    "    SELECT f.score * coalesce(t.prior, 1::float8) AS score\n"
    "    FROM fused AS f LEFT JOIN kinds AS t ON t.doc_ord = f.doc_ord\n"
    "    ORDER BY 1 DESC OFFSET greatest(%(limit)s::int8 - 1, 0) LIMIT 1\n"
    ")"
)

#: The documents whose qualified name (riido.qualified_words of the id, under the
#: snapshot's text search configuration) has lexemes, every one of them among the
#: identifier-split query's: such a document matches the name field, so only those
#: are looked at, each id read once.
_QUALIFIED = sql.SQL(
    "qualified AS MATERIALIZED (\n"
    "    SELECT t.doc_ord\n"
    "    FROM fused AS t\n"
    "    LEFT JOIN kinds AS k ON k.doc_ord = t.doc_ord\n"
    "    CROSS JOIN LATERAL (\n"
    "        SELECT to_tsvector((SELECT c.text_config FROM riido.snapshots AS c\n"
    "                            WHERE c.snapshot_id = %(snapshot_id)s)::regconfig,\n"
    "                           riido.qualified_words(({doc_id}))) AS tsv\n"
    "        OFFSET 0  -- a fence: one id and one to_tsvector per document\n"
    "    ) AS v\n"
    "    WHERE t.name > 0\n"
    "      AND (%(limit)s::int8 IS NULL\n"
    "           OR (t.score{upper} * {match} * coalesce(k.prior, 1::float8)\n"
    "               >= (SELECT b.score FROM bar AS b)) IS NOT FALSE)\n"
    "      AND v.tsv <> ''::tsvector AND tsvector_to_array(v.tsv) <@ %(lexemes_name)s::text[]\n"
    ")"
)

#: With the match: the length factor of each document that can reach the first k
#: (the match's factor in its bound only where the name field matched: no other
#: document can be lifted by it).
_LENGTHS_BOUNDED = sql.SQL(
    "lengths AS MATERIALIZED (\n"
    "    SELECT t.doc_ord, {factor} AS factor\n"
    "    FROM fused AS t\n"
    "    LEFT JOIN kinds AS k ON k.doc_ord = t.doc_ord\n"
    "    WHERE %(limit)s::int8 IS NULL\n"
    "       OR (t.score * {upper}\n"
    "           * CASE WHEN t.name > 0 THEN {match} ELSE 1::float8 END\n"
    "           * coalesce(k.prior, 1::float8)\n"
    "           >= (SELECT b.score FROM bar AS b)) IS NOT FALSE\n"
    ")"
).format(
    factor=_FACTOR.format(_LEN, param("length_prior")), upper=_UPPER, match=param("name_match")
)


class Structure(Scored):
    """The body's two columns and the name field, weighted, times the length prior,
    the name match and the prior."""

    lists = (RAW, IDENT, NAME)
    score_name = "structure_score"
    params = PARAMS

    def __init__(
        self,
        w_ident: float = STRUCTURE_W_IDENT,
        w_name: float = STRUCTURE_W_NAME,
        test_prior: float = STRUCTURE_TEST_PRIOR,
        example_prior: float = 1.0,
        name_match: float = 1.0,
        length_prior: float = 0.0,
        recent_prior: float = 1.0,
    ) -> None:
        super().__init__(
            w_ident=w_ident,
            w_name=w_name,
            test_prior=test_prior,
            example_prior=example_prior,
            name_match=name_match,
            length_prior=length_prior,
            recent_prior=recent_prior,
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

    @property
    def name_match(self) -> float:
        return self["name_match"]

    @property
    def length_prior(self) -> float:
        return self["length_prior"]

    @property
    def recent_prior(self) -> float:
        return self["recent_prior"]

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
        fields: sql.Composable = sql.SQL("({} + {} * {} + {} * {})").format(
            value(RAW), param("w_ident"), value(IDENT), param("w_name"), value(NAME)
        )
        prior = sql.SQL("coalesce({}.prior, 1::float8)")
        lengths = self.length_prior != 0
        if self.name_match == 1:
            if lengths:
                fields = sql.SQL("{} * l.factor").format(fields)
            score = sql.SQL("{} * {}").format(fields, prior.format(sql.Identifier("t")))
            ctes = (_KINDS, _LENGTHS_ALL) if lengths else (_KINDS,)
            joins = (("kinds", "t"), ("lengths", "l")) if lengths else (("kinds", "t"),)
            return Fragment((RAW, IDENT, NAME), score, ctes=ctes, joins=joins)
        # two steps: the fields' sum, then the length prior and the match (read for
        # the documents that can reach the first k with them) and the prior, in the
        # evaluation's order
        final = sql.SQL(
            "f.score{} * CASE WHEN q.doc_ord IS NULL THEN 1::float8 ELSE {} END * {}"
        ).format(
            sql.SQL(" * coalesce(l.factor, 1::float8)") if lengths else sql.SQL(""),
            param("name_match"),
            prior.format(sql.Identifier("k")),
        )
        upper = sql.SQL(" * {}").format(_UPPER) if lengths else sql.SQL("")
        qualified = _QUALIFIED.format(doc_id=bm25.DOC_ID, match=param("name_match"), upper=upper)
        return Fragment(
            (RAW, IDENT, NAME),
            fields,
            ctes=(_KINDS,),
            final=final,
            post=(_BAR, _LENGTHS_BOUNDED, qualified) if lengths else (_BAR, qualified),
            post_joins=(("kinds", "k"), ("qualified", "q"), ("lengths", "l"))
            if lengths
            else (("kinds", "k"), ("qualified", "q")),
        )

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        import numpy as np

        raw, ident, name = (batch.scores[c] / bm25.SCALE for c in self.lists)
        summed = (raw + self.w_ident * ident + self.w_name * name).tocsr()
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        if self.length_prior != 0:
            assert batch.lengths is not None  # read whenever a policy reads the fields
            # a factor per document (a few thousand), then one per stored score
            factors = length_factors(batch.lengths, self.length_prior)
            summed.data = summed.data * factors[summed.indices]
        if batch.qualified is not None and self.name_match != 1:
            # a batch's questions x documents as a dense mask: a batch is sized to
            # at most BATCH_CELLS cells, so this is a couple of MB at most
            matched = batch.qualified.tocoo()
            mask = np.zeros(summed.shape, dtype=bool)
            mask[matched.row, matched.col] = True
            here = mask[rows, summed.indices]
            summed.data = summed.data * np.where(here, self.name_match, 1.0)  # x * 1.0 is x
        prior = np.ones(summed.nnz)
        kinds = (
            (batch.test_docs, batch.about_tests, self.test_prior),
            (batch.example_docs, batch.about_examples, self.example_prior),
        )
        for docs, about, factor in kinds:
            if docs is not None and about is not None:
                demote = docs[summed.indices] & ~about[rows]
                prior = np.where(demote, np.minimum(prior, factor), prior)
        if batch.recent_docs is not None:  # only where no kind demoted the document
            lift = batch.recent_docs[summed.indices] & (prior == 1.0)
            prior = prior * np.where(lift, self.recent_prior, 1.0)
        summed.data = summed.data * prior  # the SQL's one product (x * 1.0 is x)
        summed.eliminate_zeros()  # a zero score ranks with the unmatched documents
        return summed


POLICIES = (
    Policy(
        STRUCTURE_BM25,
        Structure(
            STRUCTURE_W_IDENT,
            STRUCTURE_W_NAME,
            STRUCTURE_TEST_PRIOR,
            STRUCTURE_EXAMPLE_PRIOR,
            STRUCTURE_NAME_MATCH,
            STRUCTURE_LENGTH_PRIOR,
            STRUCTURE_RECENT_PRIOR,
        ),
        f"bm25 + {STRUCTURE_W_IDENT:g} * identifier_bm25 + {STRUCTURE_W_NAME:g} * name_bm25, "
        f"x (1 + ln(1 + length)) ^ {STRUCTURE_LENGTH_PRIOR:g}, "
        f"x {STRUCTURE_NAME_MATCH:g} when the question holds every word of the qualified name, "
        f"test code x {STRUCTURE_TEST_PRIOR:g} unless the question is about tests, "
        f"documentation and example code x {STRUCTURE_EXAMPLE_PRIOR:g} unless it is about them, "
        f"x {STRUCTURE_RECENT_PRIOR:g} when the last {RECENT_COMMITS} commits changed it",
    ),
)
