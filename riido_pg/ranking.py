"""Ranking a snapshot under a policy (CONTRACTS §3, §5).

SQL computes BM25 over each column (``sql/rank.sql``); this module asks for the one
or two ranked lists a policy needs and interleaves them with :mod:`riido_pg.interleave`.
With ``limit=K`` each list is cut at K: the first K of an interleave draw at most K
ids from either list, so the result is exactly the first K of the full ranking.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg

from riido_pg.documents import HintsRequest, check_query
from riido_pg.errors import ConflictingOptions, InvalidInput
from riido_pg.interleave import iter_interleave
from riido_pg.resources import sql_text
from riido_pg.splitting import split_identifiers
from riido_pg.store import (
    Snapshot,
    check_text_config,
    get_snapshot,
    insert_snapshot_row,
    set_load_timeout,
    write_documents,
)

__all__ = [
    "BM25",
    "EXTERNAL_HINTS_BASELINE_FIRST",
    "IDENTIFIER_BM25",
    "IDENTIFIER_BM25_AUXILIARY_FIRST",
    "IDENTIFIER_BM25_BASELINE_FIRST",
    "IDENTIFIER_POLICIES",
    "MAX_IDENTIFIER_QUERY_LEXEMES",
    "OUT_OF_SCOPE",
    "POLICIES",
    "Candidate",
    "QueryTerms",
    "Ranking",
    "query_terms",
    "rank_documents",
    "rank_snapshot",
]

Conn = psycopg.Connection[Any]

BM25 = "bm25"
IDENTIFIER_BM25 = "identifier_bm25"
IDENTIFIER_BM25_BASELINE_FIRST = "identifier_bm25_baseline_first"
IDENTIFIER_BM25_AUXILIARY_FIRST = "identifier_bm25_auxiliary_first"
EXTERNAL_HINTS_BASELINE_FIRST = "external_hints_baseline_first"
OUT_OF_SCOPE = "bm25_identifier_input_out_of_scope"

#: Policies a caller can ask for, in table order.
POLICIES = (
    BM25,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    EXTERNAL_HINTS_BASELINE_FIRST,
)
IDENTIFIER_POLICIES = (
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
)
#: Identifier hints are out of scope (§3 fallback) past this many distinct query lexemes.
MAX_IDENTIFIER_QUERY_LEXEMES = 256
#: ... or past this many bytes of identifier-split query.
MAX_IDENTIFIER_QUERY_BYTES = 4_096


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    rank: int
    bm25_score: float
    identifier_bm25_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "rank": self.rank, "bm25_score": self.bm25_score}
        if self.identifier_bm25_score is not None:
            out["identifier_bm25_score"] = self.identifier_bm25_score
        return out


@dataclass(frozen=True, slots=True)
class Ranking:
    snapshot_id: str
    policy: str
    candidates: list[Candidate] = field(default_factory=list)
    status: str = "unverified"

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "policy": self.policy,
            "status": self.status,
            "candidates": [c.to_dict() for c in self.candidates],
        }


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A query's distinct lexemes for each column."""

    raw: list[str]
    ident: list[str]
    ident_text: str

    @property
    def identifier_in_scope(self) -> bool:
        return (
            0 < len(self.ident) <= MAX_IDENTIFIER_QUERY_LEXEMES
            and len(self.ident_text.encode("utf-8")) <= MAX_IDENTIFIER_QUERY_BYTES
        )


def query_terms(conn: Conn, query: str, text_config: str) -> QueryTerms:
    ident_text = split_identifiers(query)
    row = conn.execute(
        sql_text("query_lexemes"),
        {"text_config": text_config, "raw": query, "ident": ident_text},
    ).fetchone()
    assert row is not None
    return QueryTerms(list(row[0]), list(row[1]), ident_text)


def _ranked(
    conn: Conn, snap: Snapshot, col: str, lexemes: list[str], limit: int | None
) -> list[tuple[int, str, float]]:
    rows = conn.execute(
        sql_text("rank"),
        {
            "snapshot_id": snap.snapshot_id,
            "col": col,
            "lexemes": lexemes,
            "n": snap.documents,
            "limit": limit,
        },
    ).fetchall()
    return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]


def _scores(
    conn: Conn, snap: Snapshot, col: str, lexemes: list[str], ords: Sequence[int]
) -> dict[int, float]:
    if not ords:
        return {}
    rows = conn.execute(
        sql_text("scores"),
        {"snapshot_id": snap.snapshot_id, "col": col, "lexemes": lexemes, "doc_ords": list(ords)},
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def _hint_ords(conn: Conn, snap: Snapshot, hints: Sequence[str]) -> list[int]:
    rows = conn.execute(
        "SELECT doc_id, doc_ord FROM riido.documents "
        "WHERE snapshot_id = %s AND doc_id = ANY(%s::text[])",
        (snap.snapshot_id, list(set(hints))),
    ).fetchall()
    by_id = {str(r[0]): int(r[1]) for r in rows}
    missing = [h for h in hints if h not in by_id]
    if missing:
        raise InvalidInput(
            f"hints name {len(missing)} document(s) not in snapshot "
            f"{snap.snapshot_id!r}, e.g. {missing[0]!r}"
        )
    return [by_id[h] for h in hints]


def check_policy(policy: str, hints: Sequence[str] | None) -> None:
    if policy == OUT_OF_SCOPE:
        raise ConflictingOptions(f"{OUT_OF_SCOPE} is a result label, not a policy to ask for")
    if policy not in POLICIES:
        raise ConflictingOptions(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if policy == EXTERNAL_HINTS_BASELINE_FIRST and hints is None:
        raise ConflictingOptions(f"policy {policy} needs --hints-file")
    if hints is not None and policy != EXTERNAL_HINTS_BASELINE_FIRST:
        raise ConflictingOptions(f"--hints-file cannot be used with policy {policy}")


def _rank(
    conn: Conn,
    snap: Snapshot,
    query: str,
    policy: str,
    limit: int | None,
    hints: Sequence[str] | None,
) -> Ranking:
    terms = query_terms(conn, query, snap.text_config)
    label = ""
    if policy in IDENTIFIER_POLICIES and not terms.identifier_in_scope:
        policy, label = BM25, OUT_OF_SCOPE
    use_ident = policy in IDENTIFIER_POLICIES
    raw: list[tuple[int, str, float]] = []
    ident: list[tuple[int, str, float]] = []
    if policy != IDENTIFIER_BM25:
        raw = _ranked(conn, snap, "raw", terms.raw, limit)
    if use_ident:
        ident = _ranked(conn, snap, "ident", terms.ident, limit)
    names = {o: i for o, i, _ in itertools.chain(raw, ident)}
    raw_score = {o: s for o, _, s in raw}
    ident_score = {o: s for o, _, s in ident}
    if policy == BM25:
        order = [o for o, _, _ in raw]
    elif policy == IDENTIFIER_BM25:
        order = [o for o, _, _ in ident]
    elif policy == IDENTIFIER_BM25_BASELINE_FIRST:
        order = list(iter_interleave([o for o, _, _ in raw], [o for o, _, _ in ident]))
    elif policy == IDENTIFIER_BM25_AUXILIARY_FIRST:
        order = list(iter_interleave([o for o, _, _ in ident], [o for o, _, _ in raw]))
    else:  # external hints
        assert hints is not None
        hint_ords = _hint_ords(conn, snap, hints)
        order = list(iter_interleave([o for o, _, _ in raw], hint_ords))
    if limit is not None:
        order = order[:limit]
    missing = [o for o in order if o not in raw_score]
    raw_score.update(_scores(conn, snap, "raw", terms.raw, missing))
    if use_ident:
        ident_score.update(
            _scores(conn, snap, "ident", terms.ident, [o for o in order if o not in ident_score])
        )
    unnamed = [o for o in order if o not in names]
    if unnamed:
        rows = conn.execute(
            "SELECT doc_ord, doc_id FROM riido.documents WHERE snapshot_id = %s "
            "AND doc_ord = ANY(%s::int[])",
            (snap.snapshot_id, unnamed),
        ).fetchall()
        names.update({int(r[0]): str(r[1]) for r in rows})
    candidates = [
        Candidate(names[o], rank, raw_score[o], ident_score[o] if use_ident else None)
        for rank, o in enumerate(order, start=1)
    ]
    return Ranking(snap.snapshot_id, label or policy, candidates)


def rank_snapshot(
    conn: Conn,
    snapshot_id: str,
    query: str,
    *,
    policy: str = BM25,
    limit: int | None = None,
    hints: Sequence[str] | None = None,
) -> Ranking:
    """Rank a stored snapshot. ``limit`` gives exactly the first K of the full ranking.

    Runs in one read-only repeatable-read transaction, so a concurrent ``--replace``
    is seen entirely or not at all.
    """
    check_query(query)
    check_policy(policy, hints)
    if limit is not None and limit < 1:
        raise InvalidInput("--limit must be at least 1")
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        # heavy queries hash and sort posting rows; 4MB spills them to disk
        conn.execute("SET LOCAL work_mem = '32MB'")
        snap = get_snapshot(conn, snapshot_id)
        return _rank(conn, snap, query, policy, limit, hints)


class _Rollback(Exception):
    pass


def rank_documents(
    conn: Conn,
    request: HintsRequest,
    *,
    policy: str = BM25,
    text_config: str = "english",
    limit: int | None = None,
    hints: Sequence[str] | None = None,
) -> Ranking:
    """Rank the caller's documents without keeping them: they are written inside a
    transaction that is always rolled back."""
    check_query(request.query)
    check_policy(policy, hints)
    result: list[Ranking] = []
    try:
        with conn.transaction():
            cfg = check_text_config(conn, text_config)
            temp_id = f"hints/{uuid.uuid4()}"
            insert_snapshot_row(conn, temp_id, cfg, "ready", len(request.documents), "")
            query_timeout = conn.execute("SHOW statement_timeout").fetchone()
            set_load_timeout(conn)  # writing the documents is a load, not a query
            write_documents(conn, temp_id, request.documents, cfg)
            if query_timeout:
                conn.execute(
                    "SELECT set_config('statement_timeout', %s, true)", (str(query_timeout[0]),)
                )
            snap = Snapshot(temp_id, len(request.documents), cfg, "ready", datetime.now(UTC), "")
            ranking = _rank(conn, snap, request.query, policy, limit, hints)
            result.append(
                Ranking(request.snapshot_id, ranking.policy, ranking.candidates, ranking.status)
            )
            raise _Rollback
    except _Rollback:
        pass
    return result[0]
