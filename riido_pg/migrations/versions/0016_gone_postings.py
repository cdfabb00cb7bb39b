"""Gone lists: a postings row of a snapshot stored on a base also lists, in ``gone``,
the base's documents holding its lexeme that the snapshot dropped
(``sql/segment_postings.sql``), so a query's df is a difference of stored lengths and
only the removed documents holding a query lexeme are left out (sql/scored.sql),
instead of a pass over the query's postings against the whole removed set. A snapshot
that drops documents and adds none gets a segment of no documents to carry them.

Upgrading adds the column, gives every stored snapshot that removed documents such a
segment at the end of its path, listing all of them (written by the statements a load
writes a segment with; a later snapshot on it then lists only what it drops), and
installs ``riido.search`` again, with structure_bm25's name match of 0015
(:mod:`riido_pg.server.search_functions`; :data:`INSTALLS` records the digest).
Downgrading drops the column and the segments of no documents (renumbering the paths)
and drops ``riido.search``'s functions: those of 0014 are not stored anywhere to go
back to, and these would rank a snapshot without its gone lists wrongly (upgrading
installs them again).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from __future__ import annotations

import uuid

from alembic import op
from psycopg import sql

from riido_pg.server import search_functions
from riido_pg.storage.segments import Layout, segment_statements

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "b7ed26370d23411ce6e80884edbd3f738a1349991419e4a3236bbf96f962361f"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute("ALTER TABLE riido.postings ADD COLUMN gone integer[]")
    rows = conn.execute(
        "SELECT s.snapshot_id, s.removed, s.text_config, "
        "array_agg(p.segment_id ORDER BY p.position), max(p.position), "
        "max(g.first_ord + g.documents) "
        "FROM riido.snapshots AS s "
        "JOIN riido.snapshot_segments AS p ON p.snapshot_id = s.snapshot_id "
        "JOIN riido.segments AS g ON g.segment_id = p.segment_id "
        "WHERE cardinality(s.removed) > 0 "
        "GROUP BY s.snapshot_id ORDER BY s.snapshot_id"
    ).fetchall()
    stage = sql.Identifier("riido", "load_stage")
    for snapshot_id, removed, cfg, path, last, first_ord in rows:
        # a segment of no documents (its load's stage holds none) dropping them all
        layout = Layout(None, tuple(path), "", 0, first_ord, list(removed), 0, 0)
        segment = uuid.uuid4()
        for statement, params in segment_statements(segment, uuid.uuid4(), layout, stage, cfg):
            conn.execute(statement, params)
        conn.execute(
            "INSERT INTO riido.snapshot_segments (snapshot_id, position, segment_id) "
            "VALUES (%s, %s, %s)",
            (snapshot_id, last + 1, segment),
        )
    # functions whose arguments changed, or that search.sql no longer has (the
    # settings, which a downgrade from here dropped with the rest, go too)
    search_functions.reinstall(
        conn,
        (
            # structure_bm25's name match (riido.qualified_words, 0015) adds two arguments
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8)",
            "search_removed_sql(boolean)",
            "search_gone_sql(text, text, text)",
            "search_kept_sql(text)",
        ),
    )


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
    x = op.execute
    x("DELETE FROM riido.postings WHERE cardinality(doc_ords) = 0")  # gone lists alone
    x("ALTER TABLE riido.postings DROP COLUMN gone")
    x(
        "DELETE FROM riido.snapshot_segments AS p USING riido.segments AS g "
        "WHERE g.segment_id = p.segment_id AND g.documents = 0"
    )
    # renumber each path 0, 1, ... (through negative positions: no key collides)
    x(
        "UPDATE riido.snapshot_segments AS p SET position = -1 - r.n FROM ("
        "SELECT snapshot_id, position, "
        "(row_number() OVER (PARTITION BY snapshot_id ORDER BY position) - 1)::smallint AS n "
        "FROM riido.snapshot_segments) AS r "
        "WHERE r.snapshot_id = p.snapshot_id AND r.position = p.position"
    )
    x("UPDATE riido.snapshot_segments SET position = -1 - position")
    x(
        "DELETE FROM riido.segments AS g WHERE g.documents = 0 AND NOT EXISTS "
        "(SELECT 1 FROM riido.snapshot_segments AS p WHERE p.segment_id = g.segment_id)"
    )
