"""Search from SQL, installed again for the Python API: ``riido_pg.rank_snapshot``
ranks with one statement, ``riido.search_ranked`` (riido.search's body), whenever it
gives the same ranking (docs/search-from-sql.md "Two implementations, one ranking").
``riido.search_ranked`` takes ``k`` as a bigint (a k past the snapshot's documents
ranks them all: the Python API's ``limit=None``) and ``a_forward`` (false: a snapshot
placed on a shard is no snapshot here, as for the Python API, which goes to the shard
itself), and returns three more columns: the name field's score (``structure_bm25``'s
``name_bm25_score``), the snapshot's document count and whether the query has
searchable words. ``riido.search_fusion`` returns the name field's units. The result
of ``riido.search`` is unchanged.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`; :data:`INSTALLS` records the digest), after
dropping the two functions whose arguments or result changed. Downgrading keeps them:
the functions of revision 0020 are not stored anywhere to go back to, and these rank
every policy the same through ``riido.search``.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "209ce0507f7f741206c2ed8101aaac498d0b75282f35fa8af00aec6ea37fcfd6"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.reinstall(
        conn,
        (
            "search_ranked(text, text, integer, text, text[])",
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig, float8, "
            "integer[], float8)",
        ),
    )


def downgrade() -> None:
    pass
