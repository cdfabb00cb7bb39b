"""Search from SQL, installed again for the learned policy ``model_structure_weighted``:
``riido.search`` refuses it as it refuses ``model_hints_baseline_first`` (its model
runs in Python; the error's hint names the Python API and ``riido-pg query --model
NAME --model-ranking weighted``) rather than as an unknown policy, and its result label
``structure_bm25_model_input_out_of_scope`` is refused as a label.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`); :data:`INSTALLS` records their digest
(tests/test_sql_search.py). ``riido.search_doc_id_sql()`` of 0017 is dropped first:
it now takes the value to read and a join (a document's length, for the length prior,
is read as its id is), and a call without arguments would find both. Downgrading
keeps them: the functions of revision 0018
are not stored anywhere to go back to, and these rank every policy the same.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "a3eff3c4c5498289e97b5301933265d03317a0c2c82331e07e12754bf5fe3a8b"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute("DROP FUNCTION IF EXISTS riido.search_doc_id_sql()")
    search_functions.install(conn, again=True)


def downgrade() -> None:
    pass
