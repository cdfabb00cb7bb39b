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
(``riido.snapshots.recent``: :mod:`riido_pg.extract.recent`). That score is then
multiplied by ``1 + history_prior * H / max H``, the history-similarity prior: H of a
document sums, over the snapshot's window of past commits (``riido.window_commits``,
:mod:`riido_pg.extract.similar`) that changed it, BM25 of the question's identifier
lexemes against the commit's subject divided by how many documents the commit
changed (:func:`riido_pg.extract.similar.history_weights`); a snapshot without a
window, or a question no subject shares a lexeme with, ranks as without it. Last,
the change-history prior multiplies by ``1 + change_prior * C / max C``: C of a
document sums exp(-age / CHANGE_TAU) over the window's commits that changed it (age
0: the newest; :func:`riido_pg.extract.similar.change_weights`), whatever the
question; it replaced the recency prior (whose factor ships as 1). A document whose
score is 0 ranks with the unmatched ones.

Parameters ``w_ident``, ``w_name``, ``test_prior``, ``example_prior``, ``name_match``,
``length_prior``, ``recent_prior``, ``history_prior``, ``change_prior``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from psycopg import sql

from riido_pg.extract.similar import CHANGE_TAU, SIMILAR_B, SIMILAR_COMMITS, SIMILAR_K1
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
    "STRUCTURE_CHANGE_PRIOR",
    "STRUCTURE_EXAMPLE_PRIOR",
    "STRUCTURE_HISTORY_PRIOR",
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
#: the factor of a document its revision's last commits changed (the recency
#: prior; 1 since the change-history prior replaced it), β of the history-similarity
#: prior (its window of SIMILAR_COMMITS past commits: docs/evaluation.md "History
#: similarity") and γ of the change-history prior (docs/evaluation.md "Change
#: history").
STRUCTURE_W_IDENT = 6.0
STRUCTURE_W_NAME = 6.0
STRUCTURE_NAME_MATCH = 1.75
STRUCTURE_TEST_PRIOR = 0.3
STRUCTURE_EXAMPLE_PRIOR = 0.5
STRUCTURE_LENGTH_PRIOR = 0.1
STRUCTURE_RECENT_PRIOR = 1.0
STRUCTURE_HISTORY_PRIOR = 0.5
STRUCTURE_CHANGE_PRIOR = 1.0

PARAMS = (
    Param("w_ident", STRUCTURE_W_IDENT, AT_LEAST_ZERO, "the identifier column's weight"),
    Param("w_name", STRUCTURE_W_NAME, AT_LEAST_ZERO, "the name field's weight"),
    Param("test_prior", STRUCTURE_TEST_PRIOR, UNIT_INTERVAL, "the test prior"),
    Param("example_prior", STRUCTURE_EXAMPLE_PRIOR, UNIT_INTERVAL, "the example prior"),
    Param("name_match", STRUCTURE_NAME_MATCH, AT_LEAST_ONE, "the qualified-name match factor"),
    Param("length_prior", STRUCTURE_LENGTH_PRIOR, AT_LEAST_ZERO, "the length prior's exponent"),
    Param("recent_prior", STRUCTURE_RECENT_PRIOR, AT_LEAST_ONE, "the recency prior's factor"),
    Param(
        "history_prior", STRUCTURE_HISTORY_PRIOR, AT_LEAST_ZERO, "the history-similarity prior's β"
    ),
    Param("change_prior", STRUCTURE_CHANGE_PRIOR, AT_LEAST_ZERO, "the change-history prior's γ"),
)

#: The history-similarity prior's factor of each document its snapshot's window
#: lifts (riido_pg.extract.similar.history_weights, in the same float8 operations in
#: the same order): the window; each question lexeme's idf over the window's subjects
#: (only those some subject holds); each past commit's sim_i, summed in the
#: question's lexeme order; H, summed in window order (newest first) over the commits
#: that changed the document; and 1 + β · H / max H. A fixed summation order
#: (``sum(... ORDER BY ...)``, one value after another) is what the evaluation's
#: sequential sums repeat bit for bit.
_HISTORY = (
    sql.SQL(
        "history_window AS MATERIALIZED (\n"
        "    SELECT w.position, w.lexemes, w.doc_ords FROM riido.window_commits AS w\n"
        "    WHERE w.snapshot_id = %(snapshot_id)s\n"
        ")"
    ),
    sql.SQL(
        "history_idf AS MATERIALIZED (\n"
        "    SELECT q.i, q.lexeme,\n"
        "           ln(1::float8 + (s.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS idf\n"
        "    FROM unnest(%(lexemes_name)s::text[]) WITH ORDINALITY AS q(lexeme, i)\n"
        "    CROSS JOIN (SELECT count(*)::float8 AS n FROM history_window) AS s\n"
        "    CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM history_window AS w\n"
        "                        WHERE q.lexeme = ANY(w.lexemes)) AS d\n"
        "    WHERE d.df > 0\n"
        ")"
    ),
    sql.SQL(
        "history_sim AS MATERIALIZED (\n"
        "    SELECT w.position, w.doc_ords,\n"
        "           sum(x.idf * ({k1} + 1::float8)\n"
        "               / (1::float8 + {k1} * (1::float8 - {b} + {b}\n"
        "                  * cardinality(w.lexemes)::float8 / a.avgdl))\n"
        "               ORDER BY x.i) AS sim\n"
        "    FROM history_window AS w\n"
        "    CROSS JOIN (SELECT sum(cardinality(v.lexemes))::float8 / count(*)::float8 AS avgdl\n"
        "                FROM history_window AS v) AS a\n"
        "    JOIN history_idf AS x ON x.lexeme = ANY(w.lexemes)\n"
        "    WHERE a.avgdl > 0 AND cardinality(w.doc_ords) > 0\n"
        "    GROUP BY w.position, w.doc_ords\n"
        ")"
    ).format(
        k1=sql.SQL("{}::float8").format(sql.Literal(SIMILAR_K1)),
        b=sql.SQL("{}::float8").format(sql.Literal(SIMILAR_B)),
    ),
    sql.SQL(
        "history_h AS MATERIALIZED (\n"
        "    SELECT u.doc_ord,\n"
        "           sum(s.sim / cardinality(s.doc_ords)::float8 ORDER BY s.position) AS h\n"
        "    FROM history_sim AS s CROSS JOIN LATERAL unnest(s.doc_ords) AS u(doc_ord)\n"
        "    WHERE s.sim > 0\n"
        "    GROUP BY u.doc_ord\n"
        ")"
    ),
    sql.SQL(
        "history AS MATERIALIZED (\n"
        "    SELECT h.doc_ord, 1::float8 + {beta} * (h.h / m.top) AS factor\n"
        "    FROM history_h AS h CROSS JOIN (SELECT max(v.h) AS top FROM history_h AS v) AS m\n"
        "    WHERE m.top > 0\n"
        ")"
    ).format(beta=param("history_prior")),
)


#: The change-history prior's factor of each document its snapshot's window changed
#: (riido_pg.extract.similar.change_weights, in the same float8 operations in the same
#: order): C, exp(-age / CHANGE_TAU) summed in window order (newest first) over the
#: window commits that changed the document, and 1 + γ · C / max C.
_CHANGE = (
    sql.SQL(
        "change_c AS MATERIALIZED (\n"
        "    SELECT u.doc_ord,\n"
        "           sum(exp(-w.position::float8 / {tau}) ORDER BY w.position) AS c\n"
        "    FROM riido.window_commits AS w CROSS JOIN LATERAL unnest(w.doc_ords) AS u(doc_ord)\n"
        "    WHERE w.snapshot_id = %(snapshot_id)s\n"
        "    GROUP BY u.doc_ord\n"
        ")"
    ).format(tau=sql.SQL("{}::float8").format(sql.Literal(CHANGE_TAU))),
    sql.SQL(
        "change AS MATERIALIZED (\n"
        "    SELECT c.doc_ord, 1::float8 + {gamma} * (c.c / m.top) AS factor\n"
        "    FROM change_c AS c CROSS JOIN (SELECT max(v.c) AS top FROM change_c AS v) AS m\n"
        "    WHERE m.top > 0\n"
        ")"
    ).format(gamma=param("change_prior")),
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
    "    SELECT f.score * coalesce(t.prior, 1::float8){history} AS score\n"
    "    FROM fused AS f LEFT JOIN kinds AS t ON t.doc_ord = f.doc_ord{join}\n"
    "    ORDER BY 1 DESC OFFSET greatest(%(limit)s::int8 - 1, 0) LIMIT 1\n"
    ")"
)


#: With the history-similarity or the change-history prior, the bar and the bounds
#: take each document's factors too (the priors multiply the final score, so a
#: document's bar value stays below its score and its bound above).
def _lift_parts(lifts: tuple[tuple[str, str], ...], row: str) -> dict[str, sql.Composable]:
    """The bar's and the bounds' factors and joins (``lifts``: (CTE, alias) pairs, in
    the score's order) for the row aliased ``row``."""
    return {
        "history": _lifted(lifts),
        "join": sql.SQL("").join(
            sql.SQL("\n    LEFT JOIN {} AS {} ON {}.doc_ord = {}.doc_ord").format(
                sql.Identifier(cte), sql.Identifier(a), sql.Identifier(a), sql.SQL(row)
            )
            for cte, a in lifts
        ),
    }


def _lifted(lifts: tuple[tuple[str, str], ...]) -> sql.Composable:
    """`` * coalesce(a.factor, 1)`` for each lift, in order."""
    return sql.SQL("").join(
        sql.SQL(" * coalesce({}.factor, 1::float8)").format(sql.Identifier(a)) for _, a in lifts
    )


#: The documents whose qualified name (riido.qualified_words of the id, under the
#: snapshot's text search configuration) has lexemes, every one of them among the
#: identifier-split query's: such a document matches the name field, so only those
#: are looked at, each id read once.
_QUALIFIED = sql.SQL(
    "qualified AS MATERIALIZED (\n"
    "    SELECT t.doc_ord\n"
    "    FROM fused AS t\n"
    "    LEFT JOIN kinds AS k ON k.doc_ord = t.doc_ord{join}\n"
    "    CROSS JOIN LATERAL (\n"
    "        SELECT to_tsvector((SELECT c.text_config FROM riido.snapshots AS c\n"
    "                            WHERE c.snapshot_id = %(snapshot_id)s)::regconfig,\n"
    "                           riido.qualified_words(({doc_id}))) AS tsv\n"
    "        OFFSET 0  -- a fence: one id and one to_tsvector per document\n"
    "    ) AS v\n"
    "    WHERE t.name > 0\n"
    "      AND (%(limit)s::int8 IS NULL\n"
    "           OR (t.score{upper} * {match} * coalesce(k.prior, 1::float8){history}\n"
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
    "    LEFT JOIN kinds AS k ON k.doc_ord = t.doc_ord{join}\n"
    "    WHERE %(limit)s::int8 IS NULL\n"
    "       OR (t.score * {upper}\n"
    "           * CASE WHEN t.name > 0 THEN {match} ELSE 1::float8 END\n"
    "           * coalesce(k.prior, 1::float8){history}\n"
    "           >= (SELECT b.score FROM bar AS b)) IS NOT FALSE\n"
    ")"
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
        history_prior: float = 0.0,
        change_prior: float = 0.0,
    ) -> None:
        super().__init__(
            w_ident=w_ident,
            w_name=w_name,
            test_prior=test_prior,
            example_prior=example_prior,
            name_match=name_match,
            length_prior=length_prior,
            recent_prior=recent_prior,
            history_prior=history_prior,
            change_prior=change_prior,
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

    @property
    def history_prior(self) -> float:
        return self["history_prior"]

    @property
    def change_prior(self) -> float:
        return self["change_prior"]

    def history_factors(self, batch: EvalScores, row: int) -> npt.NDArray[np.float64]:
        """Question ``row``'s factors ``1 + β · H / max H`` of the documents its
        history weights (``batch.history[row]``: their places and H / max H)."""
        assert batch.history is not None
        return 1.0 + self.history_prior * batch.history[row][1]

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
        history, change = self.history_prior != 0, self.change_prior != 0
        kinds: tuple[sql.Composable, ...] = (
            _KINDS,
            *(_HISTORY if history else ()),
            *(_CHANGE if change else ()),
        )
        lift: tuple[tuple[str, str], ...] = (
            *((("history", "h"),) if history else ()),
            *((("change", "ch"),) if change else ()),
        )
        lifted = _lifted(lift)
        if self.name_match == 1:
            if lengths:
                fields = sql.SQL("{} * l.factor").format(fields)
            score = sql.SQL("{} * {}{}").format(fields, prior.format(sql.Identifier("t")), lifted)
            ctes = (*kinds, _LENGTHS_ALL) if lengths else kinds
            joins = (("kinds", "t"), ("lengths", "l")) if lengths else (("kinds", "t"),)
            return Fragment((RAW, IDENT, NAME), score, ctes=ctes, joins=(*joins, *lift))
        # two steps: the fields' sum, then the length prior and the match (read for
        # the documents that can reach the first k with them), the prior and the
        # history-similarity prior, in the evaluation's order
        final = sql.SQL(
            "f.score{} * CASE WHEN q.doc_ord IS NULL THEN 1::float8 ELSE {} END * {}{}"
        ).format(
            sql.SQL(" * coalesce(l.factor, 1::float8)") if lengths else sql.SQL(""),
            param("name_match"),
            prior.format(sql.Identifier("k")),
            lifted,
        )
        upper = sql.SQL(" * {}").format(_UPPER) if lengths else sql.SQL("")
        parts = _lift_parts(lift, "t")
        qualified = _QUALIFIED.format(
            doc_id=bm25.DOC_ID, match=param("name_match"), upper=upper, **parts
        )
        bar = _BAR.format(**_lift_parts(lift, "f"))
        bounded = _LENGTHS_BOUNDED.format(
            factor=_FACTOR.format(_LEN, param("length_prior")),
            upper=_UPPER,
            match=param("name_match"),
            **parts,
        )
        after = (("kinds", "k"), ("qualified", "q"), ("lengths", "l"))
        return Fragment(
            (RAW, IDENT, NAME),
            fields,
            ctes=kinds,
            final=final,
            post=(bar, bounded, qualified) if lengths else (bar, qualified),
            post_joins=(*(after if lengths else after[:2]), *lift),
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
        if batch.history is not None and self.history_prior != 0:
            # each question's factors (1 + β · H / max H), the SQL's last product
            lift = np.ones(summed.shape[1])
            for row, (places, _) in enumerate(batch.history):
                if not len(places):
                    continue
                lift[places] = self.history_factors(batch, row)
                lo, hi = summed.indptr[row], summed.indptr[row + 1]
                summed.data[lo:hi] = summed.data[lo:hi] * lift[summed.indices[lo:hi]]
                lift[places] = 1.0
        if batch.change is not None and self.change_prior != 0 and len(batch.change[0]):
            # the snapshot's factors (1 + γ · C / max C), the SQL's very last product
            places, weights = batch.change
            lift = np.ones(summed.shape[1])
            lift[places] = 1.0 + self.change_prior * weights
            summed.data = summed.data * lift[summed.indices]
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
            STRUCTURE_HISTORY_PRIOR,
            STRUCTURE_CHANGE_PRIOR,
        ),
        f"bm25 + {STRUCTURE_W_IDENT:g} * identifier_bm25 + {STRUCTURE_W_NAME:g} * name_bm25, "
        f"x (1 + ln(1 + length)) ^ {STRUCTURE_LENGTH_PRIOR:g}, "
        f"x {STRUCTURE_NAME_MATCH:g} when the question holds every word of the qualified name, "
        f"test code x {STRUCTURE_TEST_PRIOR:g} unless the question is about tests, "
        f"documentation and example code x {STRUCTURE_EXAMPLE_PRIOR:g} unless it is about them, "
        f"x (1 + {STRUCTURE_HISTORY_PRIOR:g} H / max H), H lifting what the last "
        f"{SIMILAR_COMMITS} commits whose subjects resemble the question changed, "
        f"x (1 + {STRUCTURE_CHANGE_PRIOR:g} C / max C), C summing exp(-age / {CHANGE_TAU:g}) "
        f"over those {SIMILAR_COMMITS} commits that changed it (age 0: the newest)",
    ),
)
