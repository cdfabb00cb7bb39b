"""BM25 in SQL, written once: the statements every ranking and the evaluation run.

``sql/scored.sql`` is the one per-column scoring fragment (README "Ranking"); this
module composes it with :mod:`psycopg.sql` into ``sql/rank.sql`` (one column),
``sql/rank_fused.sql`` and ``sql/rank_rrf.sql`` (both columns:
:func:`two_columns`), ``sql/scores.sql``
(given documents) and ``sql/eval_postings.sql`` (every weight, for the evaluation).
A snapshot that removed documents from its path gets the fragment's removed-document
filter, and its df is each postings row's length less the removed documents counted in
one pass over the query's postings (``gone_<col>``); one that removed none gets none
(and its df is the postings' length).

Scores travel as integer *units* of 2^-40 (see ``sql/scored.sql``): :func:`score`
turns them into the float a result shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import sql

from riido_pg.resources import sql_template
from riido_pg.server.plans import Query
from riido_pg.storage.snapshots import Target

__all__ = [
    "NAME",
    "SCALE",
    "eval_postings",
    "kind_ords",
    "ranked",
    "score",
    "scores",
    "structure",
    "two_columns",
]

#: The name field's column (``riido.postings.col``): BM25 without length
#: normalisation over the words of each document's name (:mod:`riido_pg.fields`).
NAME = "name"

#: A weight's unit: scores are sums of integer multiples of 2^-40.
SCALE = float(1 << 40)

_REMOVED = sql.SQL(
    "removed AS MATERIALIZED (SELECT unnest(s.removed) AS doc_ord FROM riido.snapshots AS s "
    "WHERE s.snapshot_id = %(snapshot_id)s),\n"
)
_NOT_REMOVED = sql.SQL("u.doc_ord NOT IN (SELECT r.doc_ord FROM removed AS r)")
_KEPT_ALL = sql.SQL("cardinality(p.doc_ords)")
#: A postings row's documents the snapshot holds: its length less the removed ones
#: counted for it in ``gone_<col>`` (one pass over the query's postings, below).
_KEPT_SOME = sql.SQL(
    "cardinality(p.doc_ords) - coalesce((SELECT g.n FROM {gone} AS g "
    "WHERE g.segment_id = p.segment_id AND g.lexeme = p.lexeme), 0)"
)
#: How many documents of each postings row of the query's lexemes the snapshot
#: removed: the postings' documents streamed once and matched against ``removed``
#: (a hashed set), instead of a subquery per postings row.
_GONE = sql.SQL(
    "{gone} AS MATERIALIZED (\n"
    "    SELECT x.segment_id, x.lexeme, count(*) AS n\n"
    "    FROM (SELECT p.segment_id, p.lexeme, unnest(p.doc_ords) AS doc_ord\n"
    "          FROM unnest({lexemes}::text[]) AS q(lexeme)\n"
    "          JOIN riido.postings AS p ON p.segment_id = ANY(%(segments)s::uuid[])\n"
    "           AND p.col = {col} AND p.lexeme = q.lexeme) AS x\n"
    "    WHERE x.doc_ord IN (SELECT r.doc_ord FROM removed AS r)\n"
    "    GROUP BY x.segment_id, x.lexeme\n"
    "),\n"
)


def score(units: int) -> float:
    """The BM25 score that ``units`` (a sum of weights in units of 2^-40) stand for."""
    return units / SCALE


def _scored(target: Target, col: str, *, only: bool = False) -> sql.Composed:
    """``sql/scored.sql`` for one column, its CTEs named ``terms_<col>``,
    ``entries_<col>``, ``scored_<col>``; ``only`` restricts the sum to
    ``%(doc_ords)s``."""
    removed = target.removed > 0
    conditions = ([_NOT_REMOVED] if removed else []) + (
        [sql.SQL("u.doc_ord = ANY(%(doc_ords)s::int[])")] if only else []
    )
    keep = sql.SQL("WHERE ") + sql.SQL(" AND ").join(conditions) if conditions else sql.SQL("")
    gone = sql.Identifier(f"gone_{col}")
    lexemes = sql.Placeholder(f"lexemes_{col}")
    fragment = sql.SQL(sql_template("scored")).format(
        terms=sql.Identifier(f"terms_{col}"),
        entries=sql.Identifier(f"entries_{col}"),
        scored=sql.Identifier(f"scored_{col}"),
        lexemes=lexemes,
        # the name field is not length-normalised (b = 0): its length is never read
        length=sql.Placeholder("n" if col == NAME else f"len_{col}"),
        b=sql.SQL("0::float8" if col == NAME else "%(b)s::float8"),
        col=sql.Literal(col),
        kept=_KEPT_SOME.format(gone=gone) if removed else _KEPT_ALL,
        keep=keep,
    )
    if not removed:
        return fragment
    return _GONE.format(gone=gone, lexemes=lexemes, col=sql.Literal(col)) + fragment


def _removed(target: Target) -> sql.Composable:
    return _REMOVED if target.removed > 0 else sql.SQL("")


def _zeros(target: Target, matched: str, count: sql.Composable) -> sql.Composed:
    keep = (
        sql.SQL("AND d.doc_ord NOT IN (SELECT r.doc_ord FROM removed AS r)")
        if target.removed > 0
        else sql.SQL("")
    )
    return sql.SQL(sql_template("zeros")).format(
        matched=sql.Identifier(matched), keep=keep, count=count
    )


#: The id of document ``t.doc_ord`` (``sql/doc_id.sql``), as a scalar subquery.
_DOC_ID = sql.SQL(sql_template("doc_id").strip())

#: How many zero-score documents a ranking of ``%(limit)s`` needs after ``named``.
_ZERO_COUNT = sql.SQL(
    "(SELECT CASE WHEN %(limit)s::int8 IS NULL THEN NULL "
    "ELSE greatest(%(limit)s::int8 - count(*), 0) END FROM named)"
)


def ranked(target: Target, col: str, lexemes: Sequence[str], limit: int | None) -> Query:
    """One column's ranking (``sql/rank.sql``): rows (doc_ord, doc_id, units)."""
    statement = sql.SQL(sql_template("rank")).format(
        doc_id=_DOC_ID,
        removed=_removed(target),
        scored=_scored(target, col),
        scored_name=sql.Identifier(f"scored_{col}"),
        zeros=_zeros(target, f"scored_{col}", _ZERO_COUNT),
    )
    return Query(statement, target.params(**{f"lexemes_{col}": list(lexemes), "limit": limit}))


def two_columns(
    target: Target,
    name: str,
    raw: Sequence[str],
    ident: Sequence[str],
    limit: int | None,
    **params: object,
) -> Query:
    """A ranking over both columns: ``sql/<name>.sql`` (``rank_fused``,
    ``rank_rrf``) composed with both columns' ``sql/scored.sql``; ``params`` are its
    own parameters. Rows (doc_ord, doc_id, score, raw units, identifier units)."""
    statement = sql.SQL(sql_template(name)).format(
        doc_id=_DOC_ID,
        removed=_removed(target),
        scored_raw=_scored(target, "raw"),
        scored_ident=_scored(target, "ident"),
        raw_name=sql.Identifier("scored_raw"),
        ident_name=sql.Identifier("scored_ident"),
        zeros=_zeros(target, "matched", _ZERO_COUNT),
    )
    return Query(
        statement,
        target.params(lexemes_raw=list(raw), lexemes_ident=list(ident), limit=limit, **params),
    )


def structure(
    target: Target,
    raw: Sequence[str],
    ident: Sequence[str],
    limit: int | None,
    **params: object,
) -> Query:
    """The structure ranking (``sql/rank_structure.sql``): both body columns and the
    name field (the identifier lexemes), each ``sql/scored.sql``; ``params`` are its
    weights. Rows (doc_ord, doc_id, score, raw units, identifier units, name units)."""
    statement = sql.SQL(sql_template("rank_structure")).format(
        doc_id=_DOC_ID,
        removed=_removed(target),
        scored_raw=_scored(target, "raw"),
        scored_ident=_scored(target, "ident"),
        scored_name=_scored(target, NAME),
        zeros=_zeros(target, "matched", _ZERO_COUNT),
    )
    return Query(
        statement,
        target.params(
            lexemes_raw=list(raw),
            lexemes_ident=list(ident),
            lexemes_name=list(ident),
            limit=limit,
            **params,
        ),
    )


def kind_ords(target: Target, kind: str) -> Query:
    """The doc_ords of the snapshot's path whose kind is ``kind`` (``test`` or
    ``example``; the removed ones included: callers only look up documents the
    snapshot holds)."""
    return Query(
        "SELECT coalesce(array_agg(u.doc_ord), '{}') FROM riido.postings AS p "
        "CROSS JOIN LATERAL unnest(p.doc_ords) AS u(doc_ord) "
        "WHERE p.segment_id = ANY(%(segments)s::uuid[]) AND p.col = 'kind' "
        "AND p.lexeme = %(kind)s",
        target.params(kind=kind),
    )


def scores(target: Target, col: str, lexemes: Sequence[str], ords: Sequence[int]) -> Query:
    """One column's units for ``ords`` (``sql/scores.sql``): rows (doc_ord, units)."""
    statement = sql.SQL(sql_template("scores")).format(
        removed=_removed(target),
        scored=_scored(target, col, only=True),
        scored_name=sql.Identifier(f"scored_{col}"),
    )
    return Query(
        statement, target.params(**{f"lexemes_{col}": list(lexemes), "doc_ords": list(ords)})
    )


def eval_postings(target: Target, col: str, lexemes: Sequence[str]) -> Query:
    """Every weight of one column for ``lexemes`` (``sql/eval_postings.sql``): rows
    (lexeme, doc_ords, units) in lexeme byte order."""
    statement = sql.SQL(sql_template("eval_postings")).format(
        removed=_removed(target),
        scored=_scored(target, col),
        entries_name=sql.Identifier(f"entries_{col}"),
    )
    return Query(statement, target.params(**{f"lexemes_{col}": list(lexemes)}), binary=True)
