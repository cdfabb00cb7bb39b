"""Embeddings of a snapshot's documents under a learned hint source (``--model``).

``riido.snapshot_models`` records which models a snapshot was embedded with, their
dimension, and what embedding cost (seconds), for ``eval``'s cost columns;
``riido.embeddings`` holds one float32 little-endian vector (``bytea``) per document.
Both lead with ``snapshot_id`` and go with their snapshot (ON DELETE CASCADE).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "riido"
C_TEXT = sa.Text(collation="C")


def upgrade() -> None:
    op.create_table(
        "snapshot_models",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("model", C_TEXT, primary_key=True),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("embed_seconds", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            [f"{S}.snapshots.snapshot_id"],
            name="snapshot_models_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    op.create_table(
        "embeddings",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("model", C_TEXT, primary_key=True),
        sa.Column("doc_ord", sa.Integer(), primary_key=True),
        sa.Column("vec", postgresql.BYTEA(), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id", "model"],
            [f"{S}.snapshot_models.snapshot_id", f"{S}.snapshot_models.model"],
            name="embeddings_snapshot_model_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    # vectors are read whole and do not compress
    op.execute(f"ALTER TABLE {S}.embeddings ALTER COLUMN vec SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("embeddings", schema=S)
    op.drop_table("snapshot_models", schema=S)
