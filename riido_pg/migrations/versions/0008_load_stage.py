"""A parallel load's documents, numbered, where every session of the load can read
them (README "Loading at size").

``riido.load_stage`` holds, for the final phase of a parallel load, each document's
``doc_ord`` (its rank in id byte order), id and text key under the load's own uuid.
The documents insert and both columns' postings read it, so the load runs the three
on three sessions at once instead of building the postings only after the
documents are committed. It is UNLOGGED: nothing in it outlives the load that
wrote it (the load deletes its rows as it publishes or fails, the text collector
removes a killed load's), so it needs no WAL, and a crash that empties it loses
nothing.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE UNLOGGED TABLE riido.load_stage ("
        " load uuid NOT NULL,"
        " doc_ord integer NOT NULL,"
        ' doc_id text COLLATE "C" NOT NULL,'
        " text_key uuid NOT NULL)"
    )


def downgrade() -> None:
    op.execute("DROP TABLE riido.load_stage")
