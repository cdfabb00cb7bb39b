"""structure_bm25's length prior: a document's score is multiplied by
``(1 + ln(1 + len_raw)) ^ 0.1`` (docs/evaluation.md "Step 4, the length prior"), in
``riido.search`` too. Upgrading installs :mod:`riido_pg.server.search_functions`
again: ``riido.search_fusion`` takes the exponent as a new last argument (``a_w6``),
so its former signature is dropped first, and the settings gain
``structure_length_prior``. Downgrading to the functions of 0017 would need
their text, which is not stored anywhere; it drops ``riido.search``'s functions
instead (upgrading installs them again), as 0016's downgrade does.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "fb85b6ca8a630fedb2699c7c1afd89a466cffe5701b6ffb3ecf0f601c735548a"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.reinstall(
        conn,
        (
            # the length prior's exponent is a new last argument
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig)",
        ),
    )


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
