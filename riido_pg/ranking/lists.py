"""The ranked lists a policy draws from, computed in SQL.

``sql/rank.sql`` gives one column's BM25 ranking (or its first K); ``sql/scores.sql``
the same scores for given documents; the hint list maps the caller's ids to
``doc_ord``. Every function runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from riido_pg.errors import InvalidInput
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.storage.snapshots import Snapshot

__all__ = ["doc_ids", "fused", "hint_ords", "ranked", "scores"]


def ranked(
    conn: Conn, snap: Snapshot, column: str, lexemes: list[str], limit: int | None
) -> list[tuple[int, str, float]]:
    """(doc_ord, doc_id, score) of one column's ranking, or its first ``limit``."""
    rows = conn.execute(
        sql_text("rank"),
        {
            "snapshot_id": snap.snapshot_id,
            "col": column,
            "lexemes": lexemes,
            "n": snap.documents,
            "limit": limit,
        },
    ).fetchall()
    return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]


def fused(
    conn: Conn,
    snap: Snapshot,
    raw: list[str],
    ident: list[str],
    weight: float,
    limit: int | None,
) -> list[tuple[int, str, float, float, float]]:
    """(doc_ord, doc_id, fused score, raw score, identifier score) of the fused
    ranking ``raw + weight * ident``, or its first ``limit``."""
    rows = conn.execute(
        sql_text("rank_fused"),
        {
            "snapshot_id": snap.snapshot_id,
            "raw": raw,
            "ident": ident,
            "w": weight,
            "n": snap.documents,
            "limit": limit,
        },
    ).fetchall()
    return [(int(r[0]), str(r[1]), float(r[2]), float(r[3]), float(r[4])) for r in rows]


def scores(
    conn: Conn, snap: Snapshot, column: str, lexemes: list[str], ords: Sequence[int]
) -> dict[int, float]:
    """One column's BM25 score of each of ``ords`` (0 when unmatched)."""
    if not ords:
        return {}
    rows = conn.execute(
        sql_text("scores"),
        {
            "snapshot_id": snap.snapshot_id,
            "col": column,
            "lexemes": lexemes,
            "doc_ords": list(ords),
        },
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def hint_ords(conn: Conn, snap: Snapshot, hints: Sequence[str]) -> list[int]:
    """The doc_ords of the hint ids, in hint order; InvalidInput naming an unknown id."""
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


def doc_ids(conn: Conn, snap: Snapshot, ords: Sequence[int]) -> dict[int, str]:
    """The document id of each of ``ords``."""
    if not ords:
        return {}
    rows = conn.execute(
        "SELECT doc_ord, doc_id FROM riido.documents WHERE snapshot_id = %s "
        "AND doc_ord = ANY(%s::int[])",
        (snap.snapshot_id, list(ords)),
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}
