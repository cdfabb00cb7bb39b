"""Search from SQL, installed again: ``riido.search``'s statements read a document's id
with sql/doc_id.sql's scalar subquery, as the Python API's statements do, instead of a
call of the PL/pgSQL function ``riido.search_doc_id`` per document. A list's top keeps
every document tied with its k-th; at a million functions a question's identifier list
had 161 such documents, and their calls cost 55 ms of a query (docs/search-from-sql.md
"Speed"). The rankings are the same.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`; :data:`INSTALLS` records the digest) and drops
``riido.search_doc_id``, which nothing calls any more. Downgrading keeps them: the
functions of revision 0016 are not stored anywhere to go back to, and these rank the
same.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "3cf30043ec3740f58647099553a280bb93d8c776bd4564c0f0121955e80e07e2"

digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute("DROP FUNCTION IF EXISTS riido.search_doc_id(uuid[], integer)")
    search_functions.install(conn, again=True)


def downgrade() -> None:
    pass
