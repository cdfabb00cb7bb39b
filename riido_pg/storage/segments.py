"""Where a load's documents go: a new segment, alone or on a base (README "Snapshots
on a base").

A load either writes a self-contained snapshot (one segment holding every document)
or stores the snapshot on a *base*: the base's path of segments, less the base's
documents the load does not hold, plus one new segment with the documents it adds
or changes. :func:`plan_layout` decides which, and computes the difference
(``sql/base_diff.sql``); :func:`segment_statements` are the statements that write a
new segment's row, documents and both columns' postings from the load's numbered
stage; :func:`publish_content` points the snapshot at its path.

The base rule (automatic unless the caller names a base or asks for none): the ready
snapshot of the same text configuration sharing the most of the first chunks'
documents (:class:`~riido_pg.storage.staging.Sharing`; ties: the newest), provided
the result stays cheap to rank — at most :data:`MAX_PATH` segments in its path, and
the documents it removed from them at most :data:`MAX_REMOVED` of its own documents
(removed documents are read and skipped at every query). Past either bound the load
writes a fresh, self-contained snapshot instead. The splitter version is part of
every text key, so a snapshot split another way shares nothing and is never chosen.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass

from psycopg import sql

from riido_pg.errors import InvalidInput, SnapshotNotFound
from riido_pg.resources import sql_template
from riido_pg.server.connect import Conn
from riido_pg.server.plans import Plan, Query, run
from riido_pg.storage.fragments import HELD
from riido_pg.storage.snapshots import Snapshot, find_snapshot
from riido_pg.storage.staging import Request, Staged

__all__ = [
    "COLUMNS",
    "MAX_PATH",
    "MAX_REMOVED",
    "Layout",
    "Statement",
    "check_base",
    "fresh_layout",
    "plan_layout",
    "publish_content",
    "publish_plan",
    "segment_statements",
]

#: The most segments a snapshot's path may hold (each is one more look-up per query
#: lexeme).
MAX_PATH = 32
#: The most documents a snapshot on a base may have removed from its path, as a
#: fraction of its own documents.
MAX_REMOVED = 0.25
COLUMNS = (("raw", "tsv_raw", "len_raw"), ("ident", "tsv_ident", "len_ident"))

Statement = tuple[sql.Composed, dict[str, object]]


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a load's content goes and what the snapshot will hold."""

    #: The base (None: self-contained).
    base: Snapshot | None
    #: The base's path, which the new segment extends (empty when self-contained).
    segments: tuple[uuid.UUID, ...]
    #: Where the new segment's documents come from: riido_stage (every staged
    #: document) or riido_added (what a snapshot on a base adds).
    source: str
    #: How many documents the new segment gets (0: the path is the base's as it is).
    added: int
    first_ord: int
    #: The base's documents this snapshot drops, and their summed lengths.
    gone: list[int]
    gone_len_raw: int
    gone_len_ident: int
    #: Every document of the path this snapshot does not hold (the base's removed and
    #: ``gone``), ascending: read when the difference is computed, so a base dropped
    #: meanwhile takes nothing this load needs with it.
    removed_ords: tuple[int, ...] = ()

    @property
    def removed(self) -> int:
        return len(self.removed_ords)

    @property
    def writes(self) -> bool:
        """Whether the load writes a segment: a self-contained snapshot always does; one
        on a base when it adds documents or drops some of the base's (a segment of no
        documents then carries the dropped ones' gone lists, ``sql/segment_postings.sql``)."""
        return self.base is None or self.added > 0 or bool(self.gone)


def check_base(conn: Conn, base_id: str, cfg: str) -> Snapshot:
    """The snapshot a caller named as base: it must exist, be ready and share the
    load's text configuration."""
    base = find_snapshot(conn, base_id)
    if base is None:
        raise SnapshotNotFound(f"no snapshot {base_id!r} to load on (--base)")
    if base.state != "ready":
        raise InvalidInput(f"snapshot {base_id!r} is not ready; it cannot be a base yet")
    if base.text_config != cfg:
        raise InvalidInput(
            f"snapshot {base_id!r} uses text configuration {base.text_config!r}, not "
            f"{cfg!r}; a base must share the load's configuration"
        )
    return base


def fresh_layout() -> Layout:
    """The layout of a self-contained snapshot (one new segment holds everything)."""
    return Layout(None, (), "riido_stage", 0, 0, [], 0, 0, ())


def _candidates(conn: Conn, req: Request, staged: Staged) -> list[Snapshot]:
    """The bases the sampled chunks point at, best first."""
    ids = staged.sharing.best()
    if not ids:
        return []
    rows = conn.execute(
        "SELECT snapshot_id FROM riido.snapshots WHERE snapshot_id = ANY(%s) "
        "AND state = 'ready' AND text_config = %s",
        (ids, req.cfg),
    ).fetchall()
    found = {str(r[0]) for r in rows}
    out = [s for i in ids if i in found and (s := find_snapshot(conn, i)) is not None]
    counts = staged.sharing.counts
    out.sort(key=lambda s: (-counts[s.snapshot_id], -s.created_at.timestamp(), s.snapshot_id))
    return out


def _diff(conn: Conn, base: Snapshot) -> Layout:
    conn.execute("DROP TABLE IF EXISTS riido_added")
    conn.execute('CREATE TEMP TABLE riido_added (doc_id text COLLATE "C", key uuid)')
    statement = sql.SQL(sql_template("base_diff")).format(held=HELD)
    row = conn.execute(statement, {"snapshot_id": base.snapshot_id}).fetchone()
    assert row is not None
    added, _, gone, gone_raw, gone_ident = row
    first = conn.execute(
        "SELECT coalesce(max(g.first_ord + g.documents), 0), "
        "(SELECT s.removed FROM riido.snapshots AS s WHERE s.snapshot_id = %s) "
        "FROM riido.segments AS g WHERE g.segment_id = ANY(%s::uuid[])",
        (base.snapshot_id, list(base.segments)),
    ).fetchone()
    assert first is not None
    return Layout(
        base,
        base.segments,
        "riido_added",
        int(added),
        int(first[0]),
        list(gone),
        int(gone_raw),
        int(gone_ident),
        tuple(sorted([*(first[1] or []), *gone])),
    )


def plan_layout(conn: Conn, req: Request, staged: Staged) -> Layout:
    """Self-contained, or on which base with which difference (see the module
    docstring for the rule)."""
    if req.fresh:
        return fresh_layout()
    if req.base is not None:
        return _diff(conn, check_base(conn, req.base, req.cfg))
    for base in _candidates(conn, req, staged)[:1]:
        layout = _diff(conn, base)
        depth = len(base.segments) + (1 if layout.writes else 0)
        if depth <= MAX_PATH and layout.removed <= MAX_REMOVED * staged.documents:
            return layout
    return fresh_layout()


#: No dropped documents: :func:`segment_statements`' gone lists when a load drops none.
_NO_GONE = sql.SQL("SELECT NULL::text AS lexeme, NULL::int[] AS doc_ords WHERE false")
#: The name field's words of document ``d`` (``sql/segment_fields.sql``).
_NAME_WORDS = sql.SQL("to_tsvector(%(text_config)s::regconfig, riido.name_words(d.doc_id))")


def _gone(layout: Layout, words: sql.Composable) -> sql.Composable:
    """The lexemes of the base's documents ``layout`` drops (``sql/gone_lexemes.sql``
    over ``words``), or no rows."""
    if not layout.gone:
        return _NO_GONE
    return sql.SQL(sql_template("gone_lexemes")).format(words=words)


def segment_statements(
    segment: uuid.UUID, load: uuid.UUID, layout: Layout, stage: sql.Identifier, cfg: str
) -> list[Statement]:
    """The statements writing a new segment's row, then (in any order, or at once) its
    documents, its two body columns' postings and its fields' postings (name and
    kind: ``sql/segment_fields.sql``, under text configuration ``cfg``), from the
    numbered ``stage`` of ``load``; the postings rows list the base's documents
    ``layout`` drops in their ``gone`` arrays."""
    base = {"segment": segment, "load": load, "first_ord": layout.first_ord}
    dropped = {"path": list(layout.segments), "gone": layout.gone} if layout.gone else {}
    row = (sql.SQL(sql_template("insert_segment")).format(stage=stage), base)
    documents = (sql.SQL(sql_template("insert_documents")).format(stage=stage), base)
    postings = [
        (
            sql.SQL(sql_template("segment_postings")).format(
                tsv=sql.Identifier(tsv),
                len=sql.Identifier(length),
                stage=stage,
                gone=_gone(layout, sql.Identifier("t", tsv)),
            ),
            {**base, **dropped, "col": col},
        )
        for col, tsv, length in COLUMNS
    ]
    fields = (
        sql.SQL(sql_template("segment_fields")).format(
            stage=stage, gone=_gone(layout, _NAME_WORDS)
        ),
        {**base, **dropped, "text_config": cfg},
    )
    return [row, documents, *postings, fields]


def number(conn: Conn, layout: Layout, load: uuid.UUID, stage: sql.Identifier) -> None:
    """Number the new segment's documents into ``stage`` under ``load`` (in the
    caller's transaction)."""
    conn.execute(
        sql.SQL(sql_template("stage_documents")).format(
            stage=stage, source=sql.Identifier(layout.source)
        ),
        {"load": load, "first_ord": layout.first_ord},
    )


def publish_plan(
    snapshot_id: str,
    layout: Layout,
    segment: uuid.UUID | None,
    documents: int,
    digest: str,
    cfg: str,
    recent: Collection[str] = (),
) -> Plan[None]:
    """Point the snapshot's row at its path and statistics and flip it to ready
    (inside the caller's transaction; the row exists, loading or ready): a load's
    last step, and a scratch snapshot's (:mod:`riido_pg.storage.scratch`). ``recent``:
    the ids of its recently changed documents, stored as their doc_ords."""
    base = layout.base
    own = (0, 0, 0)
    if segment is not None:
        found = yield Query(
            "SELECT documents, len_raw, len_ident FROM riido.segments WHERE segment_id = %s",
            (segment,),
        )
        row = found.one()
        own = (int(row[0]), int(row[1]), int(row[2]))
    removed = list(layout.removed_ords)
    len_raw, len_ident = own[1], own[2]
    if base is not None:
        len_raw += base.len_raw - layout.gone_len_raw
        len_ident += base.len_ident - layout.gone_len_ident
        if base.documents - len(layout.gone) + own[0] != documents:
            raise RuntimeError(f"snapshot {snapshot_id!r}: its base's difference does not add up")
    yield Query("DELETE FROM riido.snapshot_segments WHERE snapshot_id = %s", (snapshot_id,))
    path = [*layout.segments, *([segment] if segment is not None else [])]
    yield Query(
        "INSERT INTO riido.snapshot_segments (snapshot_id, position, segment_id) "
        "SELECT %s, (p.n - 1)::smallint, p.segment_id "
        "FROM unnest(%s::uuid[]) WITH ORDINALITY AS p(segment_id, n)",
        (snapshot_id, path),
    )
    yield Query(
        "UPDATE riido.snapshots SET state = 'ready', text_config = %s, document_count = %s, "
        "content_digest = %s, created_at = now(), base = %s, added = %s, removed = %s, "
        "len_raw = %s, len_ident = %s, recent = ("
        "    SELECT coalesce(array_agg(d.doc_ord ORDER BY d.doc_ord), '{}') "
        "    FROM riido.documents AS d "
        "    WHERE d.segment_id = ANY(%s::uuid[]) AND d.doc_id = ANY(%s::text[]) "
        "      AND d.doc_ord <> ALL(%s::integer[])"
        ") WHERE snapshot_id = %s",
        (
            cfg,
            documents,
            digest,
            base.snapshot_id if base is not None else None,
            own[0],
            removed,
            len_raw,
            len_ident,
            path,
            sorted(recent),
            removed,
            snapshot_id,
        ),
    )


def publish_content(
    conn: Conn,
    snapshot_id: str,
    layout: Layout,
    segment: uuid.UUID | None,
    staged: Staged,
    cfg: str,
    recent: Collection[str] = (),
) -> None:
    """:func:`publish_plan` of a load's staged content on ``conn`` (``recent``: the
    ids of its recently changed documents)."""
    run(
        conn,
        publish_plan(snapshot_id, layout, segment, staged.documents, staged.digest, cfg, recent),
    )
