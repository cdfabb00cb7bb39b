"""structure_bm25's recency prior: ``riido.snapshots.recent`` holds the doc_ords of
the documents a snapshot's git revision changed in its last commits
(:mod:`riido_pg.extract.recent`; empty for every snapshot loaded before, and for
documents that come from anything but a git revision), and ``structure_bm25``
multiplies their scores by ``recent_prior`` (docs/evaluation.md "The recency
prior"), in ``riido.search`` too. Upgrading installs
:mod:`riido_pg.server.search_functions` again: ``riido.search_fusion`` takes the
recent documents and the factor as new last arguments, so its former signature is
dropped first, and the settings gain ``structure_recent_prior``. Downgrading drops
the column and ``riido.search``'s functions (upgrading installs them again), as
0018's downgrade does.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "38feec54cba6e909c82ffbee37c0bceecda716d8cbbaff85576014b349b33eff"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute("ALTER TABLE riido.snapshots ADD COLUMN recent integer[] NOT NULL DEFAULT '{}'")
    search_functions.reinstall(
        conn,
        (
            # the recent documents and the recency factor are new last arguments
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig, float8)",
        ),
    )


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
    conn.execute("ALTER TABLE riido.snapshots DROP COLUMN recent")
