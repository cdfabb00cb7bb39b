"""Search from SQL, installed again: reciprocal rank fusion reads a match's id only to
order documents of equal score (``riido.search_ranked_sql``), as the Python API's
``sql/rank_rrf.sql`` now does, and search.sql's functions are created with ``CREATE
OR REPLACE`` so that a later installation keeps their privileges.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`); :data:`INSTALLS` records their digest
(tests/test_sql_search.py). Downgrading keeps them: the functions of revision 0013
are not stored anywhere to go back to, and these rank the same.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "38ddc0cf50b4c44b098ce6503d18a9fba96f54b3461a471e902024818576b192"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.install(conn, again=True)


def downgrade() -> None:
    pass
