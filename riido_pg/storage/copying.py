"""Copying a stored snapshot to another server (``snapshots move``): everything it
needs, nothing the target already holds.

A snapshot needs its own rows (every riido table with a ``snapshot_id`` column: the
snapshot, its path, its questions, its models), the segments of its path (every
table with a ``segment_id`` column: the segment, its documents and postings) and
the texts those documents reference, with their vectors, and the commits of its
window of past commits. Texts, commits and segments the target
already holds are shared there like any load's (a segment is immutable and its id is
a random uuid, so the same id is the same content). Rows go by ``COPY``, binary
between servers of one major version; tables are copied parents first.
"""

from __future__ import annotations

from psycopg import sql

from riido_pg.server.connect import Conn
from riido_pg.storage.embeddings import copy_text_vectors
from riido_pg.storage.texts import copy_texts

__all__ = ["copy_snapshot", "delete_snapshot_rows"]


def _tables(conn: Conn, key: str, skip: tuple[str, ...] = ()) -> list[tuple[str, list[str]]]:
    """riido's tables with a ``key`` column, parents before children, with their
    columns."""
    rows = conn.execute(
        "SELECT c.relname, "
        "  array(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid "
        "        AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum), "
        "  array(SELECT f.confrelid::regclass::text FROM pg_constraint f "
        "        WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'riido' AND c.relkind = 'r' AND NOT (c.relname = ANY(%s)) "
        "AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid "
        "            AND a.attname = %s AND NOT a.attisdropped)",
        (list(skip), key),
    ).fetchall()
    parents = {str(r[0]): {p.removeprefix("riido.") for p in r[2]} for r in rows}
    columns = {str(r[0]): list(r[1]) for r in rows}
    ordered: list[str] = []
    while len(ordered) < len(parents):
        ready = sorted(
            t for t, ps in parents.items() if t not in ordered and ps & set(parents) <= set(ordered)
        )
        ordered.extend(ready or sorted(set(parents) - set(ordered)))
    return [(t, columns[t]) for t in ordered]


def _copy_rows(
    source: Conn, target: Conn, table: str, cols: list[str], where: sql.Composable
) -> None:
    same_major = source.info.server_version // 10000 == target.info.server_version // 10000
    fmt = sql.SQL("(FORMAT binary)" if same_major else "")
    names = sql.SQL(", ").join(map(sql.Identifier, cols))
    out = sql.SQL("COPY (SELECT {} FROM riido.{} WHERE {}) TO STDOUT {}").format(
        names, sql.Identifier(table), where, fmt
    )
    into = sql.SQL("COPY riido.{} ({}) FROM STDIN {}").format(sql.Identifier(table), names, fmt)
    with source.cursor().copy(out) as reader, target.cursor().copy(into) as writer:
        for block in reader:
            writer.write(block)


def copy_snapshot(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Copy ``snapshot_id`` from ``source`` into ``target`` inside target's
    transaction: the texts and segments it needs that the target lacks, then its own
    rows (the target must not hold the snapshot: :func:`delete_snapshot_rows`)."""
    copy_texts(source, target, snapshot_id)
    copy_text_vectors(source, target, snapshot_id)
    path = [
        r[0]
        for r in source.execute(
            "SELECT segment_id FROM riido.snapshot_segments WHERE snapshot_id = %s",
            (snapshot_id,),
        )
    ]
    held = {
        r[0]
        for r in target.execute(
            "SELECT segment_id FROM riido.segments WHERE segment_id = ANY(%s::uuid[])", (path,)
        )
    }
    missing = [s for s in path if s not in held]
    if missing:
        where = sql.SQL("segment_id = ANY({}::uuid[])").format(
            sql.Literal([str(s) for s in missing])
        )
        for table, cols in _tables(target, "segment_id", skip=("snapshot_segments", "load_stage")):
            _copy_rows(source, target, table, cols, where)
    _copy_commits(source, target, snapshot_id)
    where = sql.SQL("snapshot_id = {}").format(sql.Literal(snapshot_id))
    for table, cols in _tables(target, "snapshot_id", skip=("placements",)):
        _copy_rows(source, target, table, cols, where)


def _copy_commits(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Store on ``target`` the commits of the snapshot's window of past commits
    (``riido.commits``, shared like texts: those it holds are kept)."""
    rows = source.execute(
        "SELECT c.commit, c.subject, c.keys FROM riido.commits AS c "
        "WHERE c.commit IN (SELECT w.commit FROM riido.window_commits AS w "
        "                   WHERE w.snapshot_id = %s) ORDER BY c.commit",
        (snapshot_id,),
    ).fetchall()
    if rows:
        with target.cursor() as cur:
            cur.executemany(
                "INSERT INTO riido.commits (commit, subject, keys) VALUES (%s, %s, %s) "
                "ON CONFLICT (commit) DO NOTHING",
                rows,
            )


def delete_snapshot_rows(conn: Conn, snapshot_id: str) -> None:
    """Remove a snapshot's own rows (its segments stay, for the collector to judge),
    inside the caller's transaction."""
    conn.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
