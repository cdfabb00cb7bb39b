"""BM25 in SQL, written once: the statements every ranking and the evaluation run.

``sql/scored.sql`` is the one per-column scoring fragment (README "Ranking"); this
module composes it with :mod:`psycopg.sql` into ``sql/rank.sql`` (one column),
``sql/rank_score.sql`` (a policy's own score over its columns:
:func:`score_ranking`), ``sql/scores.sql``
(given documents) and ``sql/eval_postings.sql`` (every weight, for the evaluation).
A snapshot that removed documents from its path reads the gone lists of its postings
rows (``sql/segment_postings.sql``): a lexeme's df is its rows' lengths less their gone
lists' lengths, and the removed documents those list (``gone_<col>``) are left out of
the scores; one that removed none reads its rows' lengths alone.

Scores travel as integer *units* of 2^-40 (see ``sql/scored.sql``): :func:`score`
turns them into the float a result shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from psycopg import sql

from riido_pg.resources import sql_template
from riido_pg.server.plans import Query
from riido_pg.storage.fragments import REMOVED_ORDS
from riido_pg.storage.snapshots import Target

__all__ = [
    "DOC_ID",
    "KINDS",
    "NAME",
    "SCALE",
    "doc_value",
    "eval_postings",
    "kind_ords",
    "ranked",
    "score",
    "score_ranking",
    "scores",
]

#: The name field's column (``riido.postings.col``): BM25 without length
#: normalisation over the words of each document's name (:mod:`riido_pg.fields`).
NAME = "name"

#: A weight's unit: scores are sums of integer multiples of 2^-40.
SCALE = float(1 << 40)
#: The same scale as the float8 every statement multiplies or divides by.
SCALE_SQL = sql.SQL("{}::float8").format(sql.Literal(1 << 40))

#: Below this every integer is a float8, and float8 adds integers below it exactly.
_EXACT = 2**53

#: One term's BM25 weight in units of 2^-40, rounded to the nearest, of the row ``u``
#: (``idf``, ``avgdl``: the snapshot's; ``tf``, ``dl``: the document's): the one
#: expression ``sql/scored.sql`` and ``sql/scores.sql`` compute, in this order, so both
#: give the same bits; the evaluation's numpy twin is
#: :func:`riido_pg.evaluation.scoring.units` (same operations, same order).
WEIGHT = sql.SQL(
    "(u.idf * u.tf / (u.tf + %(k1)s::float8 * (1 - {b} + {b} * u.dl / u.avgdl)) * {scale})::int8"
)

_REMOVED = sql.SQL("removed AS MATERIALIZED ({}),\n").format(REMOVED_ORDS)
#: A document of the path the snapshot holds: ``{}`` (a doc_ord) not among ``removed``
#: (every document it removed: the zero-score tail's filter).
_NOT_REMOVED = sql.SQL("{} NOT IN (SELECT r.doc_ord FROM removed AS r)")
#: A scored document the snapshot holds: ``{doc}`` not among ``{gone}`` (the removed
#: documents holding one of the query's lexemes, from the rows' gone lists).
_NOT_GONE = sql.SQL("{doc} NOT IN (SELECT g.doc_ord FROM {gone} AS g)")
_KEPT_ALL = sql.SQL("cardinality(p.doc_ords)")
#: What a postings row adds to its lexeme's df: its length less its gone list's (the
#: removed documents holding the lexeme that its segment's snapshot dropped,
#: ``sql/segment_postings.sql``).
_KEPT_SOME = sql.SQL("cardinality(p.doc_ords) - coalesce(cardinality(p.gone), 0)")
#: The removed documents holding one of the query's lexemes: the rows' gone lists.
_GONE = sql.SQL("{gone} AS MATERIALIZED (SELECT unnest(t.gone) AS doc_ord FROM {terms} AS t),\n")


def score(units: int) -> float:
    """The BM25 score that ``units`` (a sum of weights in units of 2^-40) stand for."""
    return units / SCALE


def _sum(target: Target, lexemes: int) -> sql.Composable:
    """How ``sql/scored.sql`` adds a document's units: as float8 when no sum of
    ``lexemes`` units can reach 2^53, so every partial sum is an exact integer in any
    order (and float8's sum, keeping its state by value, is the cheaper aggregate);
    as int8 (a numeric state) otherwise.

    A document holds at most one unit per query lexeme, and a unit is at most
    idf * 2^40 rounded: with k1 >= 0 and 0 <= b <= 1 the saturation tf / (tf + k1 *
    (1 - b + b * dl / avgdl)) is at most 1, and idf = ln(1 + (N - df + 0.5) / (df +
    0.5)) is at most ln(2N + 2) (df >= 0); the bound is taken with a margin for the
    logarithm's rounding."""
    unit = math.log(2 * max(target.documents, 0) + 2) * (1 + 1e-9) * SCALE + 1
    if target.k1 >= 0 and 0 <= target.b <= 1 and lexemes * unit < _EXACT:
        return sql.SQL("sum(e.units::float8)::int8")
    return sql.SQL("sum(e.units)::int8")


def _column(target: Target, col: str, count: int) -> dict[str, sql.Composable]:
    """What ``sql/scored.sql`` and ``sql/scores.sql`` need of one column of a query of
    ``count`` distinct lexemes."""
    # the name field is not length-normalised (b = 0): its length is never read
    b = sql.SQL("0::float8" if col == NAME else "%(b)s::float8")
    removed = target.removed > 0
    return {
        "lexemes": sql.Placeholder(f"lexemes_{col}"),
        "length": sql.Placeholder("n" if col == NAME else f"len_{col}"),
        "b": b,
        "col": sql.Literal(col),
        "kept": _KEPT_SOME if removed else _KEPT_ALL,
        "weight": WEIGHT.format(b=b, scale=SCALE_SQL),
        "sum": _sum(target, count),
    }


def _scored(target: Target, col: str, count: int, *, entries: bool = False) -> sql.Composed:
    """``sql/scored.sql`` for one column of a query of ``count`` distinct lexemes,
    its CTEs named ``terms_<col>``, ``entries_<col>``, ``scored_<col>`` (and
    ``gone_<col>`` when the snapshot removed documents). The removed documents are
    left out of the scores, per document (less work than per entry: a document has an
    entry per query lexeme it holds), or of the ``entries`` when those are read."""
    removed = target.removed > 0
    terms, gone = sql.Identifier(f"terms_{col}"), sql.Identifier(f"gone_{col}")
    return sql.SQL(sql_template("scored")).format(
        terms=terms,
        entries=sql.Identifier(f"entries_{col}"),
        scored=sql.Identifier(f"scored_{col}"),
        gone=(_GONE.format(gone=gone, terms=terms) if removed else sql.SQL("")),
        keep=(
            sql.SQL("WHERE ") + _NOT_GONE.format(doc=sql.Identifier("u", "doc_ord"), gone=gone)
            if removed and entries
            else sql.SQL("")
        ),
        keep_scored=(
            sql.SQL("HAVING ") + _NOT_GONE.format(doc=sql.Identifier("e", "doc_ord"), gone=gone)
            if removed and not entries
            else sql.SQL("")
        ),
        **_column(target, col, count),
    )


def _removed(target: Target) -> sql.Composable:
    return _REMOVED if target.removed > 0 else sql.SQL("")


def _zeros(target: Target, matched: str, count: sql.Composable) -> sql.Composed:
    keep = (
        sql.SQL("AND ") + _NOT_REMOVED.format(sql.Identifier("d", "doc_ord"))
        if target.removed > 0
        else sql.SQL("")
    )
    return sql.SQL(sql_template("zeros")).format(
        matched=sql.Identifier(matched), keep=keep, count=count
    )


def doc_value(value: str, join: str = "") -> sql.Composed:
    """``value`` (an expression over ``d``, riido.documents' row, and what ``join``
    joins to it) of document ``t.doc_ord`` (``sql/doc_id.sql``), as a scalar subquery."""
    return sql.SQL(sql_template("doc_id").strip()).format(
        value=sql.SQL(value), join=sql.SQL(f"\n  {join}" if join else "")
    )


#: The id of document ``t.doc_ord`` (``sql/doc_id.sql``), as a scalar subquery.
DOC_ID = doc_value("d.doc_id")

#: How many zero-score documents a ranking of ``%(limit)s`` needs after ``named``.
_ZERO_COUNT = sql.SQL(
    "(SELECT CASE WHEN %(limit)s::int8 IS NULL THEN NULL "
    "ELSE greatest(%(limit)s::int8 - count(*), 0) END FROM named)"
)

#: Each document of the path with each of its kinds (``test``, ``example``: the
#: ``kind`` postings; the removed ones included: callers only look up documents the
#: snapshot holds).
_KINDS = sql.SQL(
    "SELECT p.lexeme AS kind, unnest(p.doc_ords) AS doc_ord FROM riido.postings AS p "
    "WHERE p.segment_id = ANY(%(segments)s::uuid[]) AND p.col = 'kind'"
)
#: The same, for a policy's fragment to read (``structure_bm25``'s priors).
KINDS = _KINDS

#: One column's matches numbered in its ranking's order (``sql/rank_score.sql``): score
#: descending, then id. A document's id decides only among documents of equal score,
#: so only those are looked up; in a path of one segment not even they are, since a
#: segment numbers its documents in id byte order (``sql/stage_documents.sql``).
_RANKED_ONE_SEGMENT = sql.SQL(
    "{ranked} AS (\n"
    "    SELECT t.doc_ord, t.units, row_number() OVER (ORDER BY t.units DESC, t.doc_ord) AS r\n"
    "    FROM {scored} AS t\n"
    ")"
)
_RANKED = sql.SQL(
    "{ranked} AS (\n"
    "    SELECT x.doc_ord, x.units, row_number() OVER (ORDER BY x.units DESC, x.doc_id) AS r\n"
    "    FROM (SELECT t.doc_ord, t.units, CASE WHEN t.tied THEN ({doc_id}) END AS doc_id\n"
    "          FROM (SELECT s.doc_ord, s.units, count(*) OVER (PARTITION BY s.units) > 1 AS tied\n"
    "                FROM {scored} AS s) AS t) AS x\n"
    ")"
)


def _ranked(target: Target, col: str) -> sql.Composed:
    """CTE ``ranked_<col>``: ``scored_<col>``'s matches numbered in ranking order."""
    shape = _RANKED_ONE_SEGMENT if len(target.segments) == 1 else _RANKED
    return shape.format(
        ranked=sql.Identifier(f"ranked_{col}"),
        doc_id=DOC_ID,
        scored=sql.Identifier(f"scored_{col}"),
    )


def _tail(
    target: Target, matched: str, score: str, columns: Sequence[str], zero_join: str | None
) -> sql.Composed:
    """``sql/rank_tail.sql`` on CTE ``matched`` ranked by ``score``, the result
    showing ``columns`` too; a zero-score document takes its column scores from CTE
    ``zero_join`` (0 where it has none, and when ``zero_join`` is None)."""

    def each(alias: str) -> sql.Composable:
        return sql.SQL("").join(sql.SQL(", {}").format(sql.Identifier(alias, c)) for c in columns)

    if zero_join is None:
        zero_columns: sql.Composable = sql.SQL(", 0" * len(columns))
        join: sql.Composable = sql.SQL("")
    else:
        zero_columns = sql.SQL("").join(
            sql.SQL(", coalesce({}, 0)").format(sql.Identifier("f", c)) for c in columns
        )
        join = sql.SQL(" LEFT JOIN {} AS f ON f.doc_ord = z.doc_ord").format(
            sql.Identifier(zero_join)
        )
    return sql.SQL(sql_template("rank_tail")).format(
        matched=sql.Identifier(matched),
        score=sql.Identifier(score),
        doc_id=DOC_ID,
        named_columns=each("t"),
        zero_columns=zero_columns,
        zero_join=join,
        output=each("r"),
        zeros=_zeros(target, matched, _ZERO_COUNT),
    )


def ranked(target: Target, col: str, lexemes: Sequence[str], limit: int | None) -> Query:
    """One column's ranking (``sql/rank.sql``): rows (doc_ord, doc_id, units)."""
    statement = sql.SQL(sql_template("rank")).format(
        removed=_removed(target),
        scored=_scored(target, col, len(lexemes)),
        tail=_tail(target, f"scored_{col}", "units", (), None),
    )
    return Query(statement, target.params(**{f"lexemes_{col}": list(lexemes), "limit": limit}))


def score_ranking(
    target: Target,
    lexemes: Mapping[str, Sequence[str]],
    limit: int | None,
    *,
    score: sql.Composable,
    ranked: bool = False,
    ctes: Sequence[sql.Composable] = (),
    joins: Sequence[tuple[str, str]] = (),
    final: sql.Composable | None = None,
    post: Sequence[sql.Composable] = (),
    post_joins: Sequence[tuple[str, str]] = (),
    params: Mapping[str, object] | None = None,
) -> Query:
    """A ranking by a policy's own score (``sql/rank_score.sql``): each column of
    ``lexemes`` (its query lexemes) scored by ``sql/scored.sql`` (its matches numbered
    in ranking order too when ``ranked``), full-joined on doc_ord (column ``c``'s row
    aliased ``c_<c>``), ``score`` the policy's expression over them, reading ``ctes``
    too (each ``name AS (...)``), those of ``joins`` (CTE, alias) left-joined on the
    document's doc_ord; a second step's ``final`` score over ``fused``'s row ``f``
    reads ``post`` (CTEs after ``fused``), those of ``post_joins`` left-joined on
    ``f.doc_ord``; ``params`` are its own parameters. Rows (doc_ord, doc_id, score,
    each column's units)."""
    columns = list(lexemes)
    alias = [sql.Identifier(f"c_{c}") for c in columns]
    source = "ranked_{}" if ranked else "scored_{}"

    def doc_ord(upto: int) -> sql.Composable:
        ords = [sql.SQL("{}.doc_ord").format(a) for a in alias[:upto]]
        return (
            ords[0] if len(ords) == 1 else sql.SQL("coalesce({})").format(sql.SQL(", ").join(ords))
        )

    joined: list[sql.Composable] = [
        sql.SQL("{} AS {}").format(sql.Identifier(source.format(columns[0])), alias[0])
    ]
    for n, (col, a) in enumerate(zip(columns[1:], alias[1:], strict=True), start=1):
        joined.append(
            sql.SQL("\n    FULL JOIN {} AS {} ON {}.doc_ord = {}").format(
                sql.Identifier(source.format(col)), a, a, doc_ord(n)
            )
        )
    before = [_scored(target, c, len(lexemes[c])) for c in columns]
    if ranked:
        before += [_ranked(target, c) for c in columns]
    statement = sql.SQL(sql_template("rank_score")).format(
        removed=_removed(target),
        scored=sql.SQL(",\n").join(before),
        ctes=sql.SQL("").join(sql.SQL("{},\n").format(c) for c in ctes),
        doc_ord=doc_ord(len(columns)),
        units=sql.SQL("").join(
            sql.SQL(",\n           coalesce({}.units, 0) AS {}").format(a, sql.Identifier(c))
            for c, a in zip(columns, alias, strict=True)
        ),
        score=score,
        joined=sql.Composed(joined),
        joins=sql.SQL("").join(
            sql.SQL("\n    LEFT JOIN {} AS {} ON {}.doc_ord = {}").format(
                sql.Identifier(cte), sql.Identifier(a), sql.Identifier(a), doc_ord(len(columns))
            )
            for cte, a in joins
        ),
        post=sql.SQL("").join(sql.SQL("{},\n").format(c) for c in post),
        final=final if final is not None else sql.SQL("f.score"),
        post_joins=sql.SQL("").join(
            sql.SQL("\n          LEFT JOIN {} AS {} ON {}.doc_ord = f.doc_ord").format(
                sql.Identifier(cte), sql.Identifier(a), sql.Identifier(a)
            )
            for cte, a in post_joins
        ),
        columns=sql.SQL("").join(sql.SQL(", {}").format(sql.Identifier("f", c)) for c in columns),
        # a document scoring 0 (a weight of 0) may still have column scores
        tail=_tail(target, "matched", "score", columns, "fused"),
    )
    named = {f"lexemes_{c}": list(lx) for c, lx in lexemes.items()}
    return Query(statement, target.params(**named, limit=limit, **(params or {})))


def kind_ords(target: Target, kind: str) -> Query:
    """The doc_ords of the snapshot's path whose kind is ``kind`` (``test`` or
    ``example``; the removed ones included: callers only look up documents the
    snapshot holds)."""
    return Query(
        sql.SQL(
            "SELECT coalesce(array_agg(x.doc_ord), '{{}}') FROM ({}) AS x WHERE x.kind = %(kind)s"
        ).format(_KINDS),
        target.params(kind=kind),
    )


def scores(target: Target, col: str, lexemes: Sequence[str], ords: Sequence[int]) -> Query:
    """One body column's units for ``ords`` (``sql/scores.sql``): rows (doc_ord,
    units)."""
    if col not in ("raw", "ident"):
        raise ValueError(f"scores are read from the texts of a body column, not {col!r}")
    statement = sql.SQL(sql_template("scores")).format(
        tsv=sql.Identifier(f"tsv_{col}"),
        len=sql.Identifier(f"len_{col}"),
        **_column(target, col, len(lexemes)),
    )
    return Query(
        statement, target.params(**{f"lexemes_{col}": list(lexemes), "doc_ords": list(ords)})
    )


def eval_postings(target: Target, col: str, lexemes: Sequence[str]) -> Query:
    """What every weight of one column for ``lexemes`` is computed from
    (``sql/eval_postings.sql``): rows (lexeme, idf, avgdl, doc_ords, tfs, dls, gone),
    one per postings row of the path, in lexeme byte order."""
    statement = sql.SQL(sql_template("eval_postings")).format(
        scored=_scored(target, col, len(lexemes), entries=True),
        terms_name=sql.Identifier(f"terms_{col}"),
    )
    return Query(statement, target.params(**{f"lexemes_{col}": list(lexemes)}), binary=True)
