"""Drop riido.column_stats: written at every load, read by nothing.

A ranking needs only idf and tfn, which the postings hold; N and avgdl are computed
where the postings are built (sql/finalize_column.sql). The downgrade recreates the
table and fills it from the stored documents and postings.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

S = "riido"


def upgrade() -> None:
    op.drop_table("column_stats", schema=S)


def downgrade() -> None:
    op.create_table(
        "column_stats",
        sa.Column("snapshot_id", sa.Text(collation="C"), primary_key=True),
        sa.Column("col", sa.Text(), primary_key=True),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.Column("avgdl", postgresql.DOUBLE_PRECISION(), nullable=False),
        sa.Column("terms", sa.Integer(), nullable=False),
        sa.CheckConstraint("col IN ('raw', 'ident')", name="column_stats_col_check"),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            [f"{S}.snapshots.snapshot_id"],
            name="column_stats_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    op.execute(
        """
        INSERT INTO riido.column_stats (snapshot_id, col, documents, avgdl, terms)
        SELECT d.snapshot_id, c.col, count(*),
               coalesce(avg(CASE c.col WHEN 'raw' THEN d.len_raw ELSE d.len_ident END), 0),
               (SELECT count(*) FROM riido.postings AS p
                WHERE p.snapshot_id = d.snapshot_id AND p.col = c.col)
        FROM riido.documents AS d CROSS JOIN (VALUES ('raw'), ('ident')) AS c(col)
        GROUP BY d.snapshot_id, c.col
        """
    )
