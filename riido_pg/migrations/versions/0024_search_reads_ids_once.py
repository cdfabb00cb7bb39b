"""Search from SQL, installed again: ``riido.search_ranked`` reads each result's id
once. ``riido.search_column`` and ``riido.search_fusion`` return the id they read to
order their rows (a third and a sixth column), and the ranking takes it from there
instead of looking every result up again by ``doc_ord`` (only a hint no list held is
looked up); ``riido.search_ranked`` runs with ``jit`` off (docs/search-from-sql.md
"Speed"). Past the first hundreds of candidates that lookup, and compiling the
statement that did it, made the one statement slower than the composed path. The
result of ``riido.search`` and of ``riido.search_ranked`` is unchanged.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`; :data:`INSTALLS` records the digest), after
dropping the two functions whose result changed. Downgrading keeps them: the
functions of revision 0022 are not stored anywhere to go back to, and these rank every
policy the same.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "603f59c23ab8402f8a8dd24554ecd39c0e51e03f61fa02be4c65291058a5af98"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.reinstall(
        conn,
        (
            "search_column(uuid[], integer[], bigint, bigint, float8, float8, text, text[], "
            "bigint)",
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig, float8, "
            "integer[], float8)",
        ),
    )


def downgrade() -> None:
    pass
