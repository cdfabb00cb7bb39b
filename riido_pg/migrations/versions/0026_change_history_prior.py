"""structure_bm25's change-history prior: ``riido.search_fusion`` reads the snapshot's
window of past commits (``riido.window_commits``, stored since 0025) for how often and
how recently each document was changed, and multiplies a document's score by
1 + γ · C / max C (docs/evaluation.md "Change history"); the recency prior's factor is
1 since. No table changes: the window holds what the prior reads.

Installs this package's ``sql/search.sql`` and ``riido.search_settings()``
(:mod:`riido_pg.server.search_functions`; :data:`INSTALLS` records the digest), after
dropping ``riido.search_fusion``, which takes γ and the decay's τ as new last
arguments; the settings gain ``structure_change_prior`` and ``change_tau``.
Downgrading keeps them: the functions of revision 0025 are not stored anywhere to go
back to, and with γ 0 they rank as those did.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "0d6d4df92c08f7f5375782dc3f18ec7bdb938c696c5f0e724ec344cf0ea4d5d9"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.reinstall(
        conn,
        (
            # γ and τ are new last arguments
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig, float8, "
            "integer[], float8, text, float8, float8, float8)",
        ),
    )


def downgrade() -> None:
    pass
