"""Gone postings: each segment of a snapshot stored on a base lists, per lexeme of
each ranked column (``gone_raw``, ``gone_ident``, ``gone_name``), the base's documents
its snapshot dropped (``sql/segment_gone.sql``), so a query's df is a difference of
stored lengths and only the removed documents holding a query lexeme are left out
(sql/scored.sql), instead of a pass over the query's postings against the whole
removed set. A snapshot that drops documents and adds none gets a segment of no
documents to carry them.

Upgrading gives every stored snapshot that removed documents such a segment at the
end of its path, listing all of them (a later snapshot on it then lists only what it
drops), and installs ``riido.search`` again (:mod:`riido_pg.server.search_functions`;
:data:`INSTALLS` records the digest). Downgrading deletes the gone rows and the
segments of no documents (renumbering the paths) and drops ``riido.search``'s
functions: those of 0014 are not stored anywhere to go back to, and these would rank a
snapshot that removed documents without its gone rows wrongly (upgrading installs
them again).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

import uuid

from alembic import op

from riido_pg.resources import sql_template
from riido_pg.server import search_functions

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "1cc29162773c8b69f6584a7021f2875662c1484cf4444952d18d480031f71cf2"
digest = search_functions.digest

_COLUMNS = "('raw', 'ident', 'name', 'kind', 'gone_raw', 'gone_ident', 'gone_name')"


def _check(columns: str) -> None:
    op.execute("ALTER TABLE riido.postings DROP CONSTRAINT postings_col_check")
    op.execute(
        f"ALTER TABLE riido.postings ADD CONSTRAINT postings_col_check CHECK (col IN {columns})"
    )


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    _check(_COLUMNS)
    gone = sql_template("segment_gone")
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
    for snapshot_id, removed, cfg, path, last, first_ord in rows:
        segment = uuid.uuid4()
        conn.execute(
            "INSERT INTO riido.segments (segment_id, first_ord, documents, len_raw, len_ident) "
            "VALUES (%s, %s, 0, 0, 0)",
            (segment, first_ord),
        )
        conn.execute(gone, {"segment": segment, "path": path, "gone": removed, "text_config": cfg})
        conn.execute(
            "INSERT INTO riido.snapshot_segments (snapshot_id, position, segment_id) "
            "VALUES (%s, %s, %s)",
            (snapshot_id, last + 1, segment),
        )
    # functions whose arguments changed, or that search.sql no longer has; and the
    # settings, which a downgrade from here dropped with the rest
    for signature in (
        "search_removed_sql(boolean)",
        "search_gone_sql(text, text, text)",
        "search_kept_sql(text)",
        "search_settings()",
    ):
        conn.execute(f"DROP FUNCTION IF EXISTS riido.{signature}")
    search_functions.install(conn, again=False)


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
    x = op.execute
    x("DELETE FROM riido.postings WHERE col LIKE 'gone%'")
    x(
        "DELETE FROM riido.snapshot_segments AS p USING riido.segments AS g "
        "WHERE g.segment_id = p.segment_id AND g.documents = 0"
    )
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
    _check("('raw', 'ident', 'name', 'kind')")
