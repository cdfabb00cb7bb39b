"""The shard catalog of a coordinator (README "More than one server").

``riido.shards`` names each shard, its ``postgres_fdw`` foreign server (which, with
its user mapping, holds the credentials) and its connection string without user or
password; ``riido.placements`` says which shard holds a snapshot. A snapshot with no
placement lives in the coordinator's own tables, as on a single server. A
placement's ``snapshot_id`` is not a foreign key: the snapshot's rows are on the shard.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

S = "riido"
C_TEXT = sa.Text(collation="C")


def upgrade() -> None:
    op.create_table(
        "shards",
        sa.Column("name", C_TEXT, primary_key=True),
        sa.Column("server", sa.Text(), nullable=False, unique=True),
        sa.Column("conninfo", sa.Text(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema=S,
    )
    op.create_table(
        "placements",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("shard", C_TEXT, nullable=False),
        sa.ForeignKeyConstraint(
            ["shard"], [f"{S}.shards.name"], name="placements_shard_fkey", ondelete="RESTRICT"
        ),
        schema=S,
    )


def downgrade() -> None:
    op.drop_table("placements", schema=S)
    op.drop_table("shards", schema=S)
