"""Snapshots, documents, per-column statistics and postings in schema riido.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "riido"
C_TEXT = sa.Text(collation="C")


def _snapshot_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["snapshot_id"],
        ["riido.snapshots.snapshot_id"],
        name=f"{table}_snapshot_id_fkey",
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.execute(f"CREATE SCHEMA IF NOT EXISTS {S}")
    op.create_table(
        "snapshots",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("text_config", sa.Text(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("document_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("content_digest", sa.Text(), nullable=False),
        sa.Column("k1", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("b", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint("state IN ('loading', 'ready')", name="snapshots_state_check"),
        schema=S,
    )
    op.create_table(
        "documents",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("doc_ord", sa.Integer(), primary_key=True),
        sa.Column("doc_id", C_TEXT, nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("tsv_raw", postgresql.TSVECTOR(), nullable=False),
        sa.Column("tsv_ident", postgresql.TSVECTOR(), nullable=False),
        sa.Column("len_raw", sa.Integer(), nullable=False),
        sa.Column("len_ident", sa.Integer(), nullable=False),
        sa.UniqueConstraint("snapshot_id", "doc_id", name="documents_snapshot_id_doc_id_key"),
        _snapshot_fk("documents"),
        schema=S,
    )
    op.create_table(
        "column_stats",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("col", sa.Text(), primary_key=True),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.Column("avgdl", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("terms", sa.Integer(), nullable=False),
        sa.CheckConstraint("col IN ('raw', 'ident')", name="column_stats_col_check"),
        _snapshot_fk("column_stats"),
        schema=S,
    )
    op.create_table(
        "postings",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("col", sa.Text(), primary_key=True),
        sa.Column("lexeme", C_TEXT, primary_key=True),
        sa.Column("df", sa.Integer(), nullable=False),
        sa.Column("idf", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("doc_ords", postgresql.ARRAY(sa.Integer()), nullable=False),
        sa.Column("tfn", postgresql.ARRAY(postgresql.DOUBLE_PRECISION()), nullable=False),
        sa.CheckConstraint("col IN ('raw', 'ident')", name="postings_col_check"),
        _snapshot_fk("postings"),
        schema=S,
    )
    # Posting arrays are read whole and compress badly: keep them out of pglz.
    op.execute(f"ALTER TABLE {S}.postings ALTER COLUMN doc_ords SET STORAGE EXTERNAL")
    op.execute(f"ALTER TABLE {S}.postings ALTER COLUMN tfn SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("postings", schema=S)
    op.drop_table("column_stats", schema=S)
    op.drop_table("documents", schema=S)
    op.drop_table("snapshots", schema=S)
