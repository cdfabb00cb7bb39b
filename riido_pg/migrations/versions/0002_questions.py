"""Evaluation corpora: questions and their targets, stored with their snapshot.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

``riido-pg eval BEIR_DIR`` loads the directory's corpus as a snapshot and stores its
questions and targets here, so re-evaluating it (or evaluating it by snapshot id)
does not reload it. ``eval_corpora`` marks a snapshot as having an evaluation set
and keeps the BEIR digest. Every table leads with ``snapshot_id``; dropping a
snapshot (or deleting its documents) removes its evaluation set by cascade.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "riido"
C_TEXT = sa.Text(collation="C")


def upgrade() -> None:
    op.create_table(
        "eval_corpora",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("corpus_sha256", sa.Text(), nullable=False),
        sa.Column("content_digest", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="eval_corpora_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    op.create_table(
        "questions",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("question_id", C_TEXT, primary_key=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("repo", sa.Text(), nullable=False, server_default=""),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="questions_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    op.create_table(
        "targets",
        sa.Column("snapshot_id", C_TEXT, primary_key=True),
        sa.Column("question_id", C_TEXT, primary_key=True),
        sa.Column("doc_id", C_TEXT, primary_key=True),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.CheckConstraint("score > 0", name="targets_score_check"),
        sa.ForeignKeyConstraint(
            ["snapshot_id", "question_id"],
            ["riido.questions.snapshot_id", "riido.questions.question_id"],
            name="targets_question_fkey",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id", "doc_id"],
            ["riido.documents.snapshot_id", "riido.documents.doc_id"],
            name="targets_document_fkey",
            ondelete="CASCADE",
        ),
        schema=S,
    )
    # Deleting a snapshot's documents cascades here: index the referencing columns.
    op.create_index(
        "targets_snapshot_id_doc_id_idx", "targets", ["snapshot_id", "doc_id"], schema=S
    )


def downgrade() -> None:
    op.drop_index("targets_snapshot_id_doc_id_idx", table_name="targets", schema=S)
    op.drop_table("targets", schema=S)
    op.drop_table("questions", schema=S)
    op.drop_table("eval_corpora", schema=S)
