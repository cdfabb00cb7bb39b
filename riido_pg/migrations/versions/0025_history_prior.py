"""structure_bm25's history-similarity prior: ``riido.commits`` holds what each git
commit says and changed (its cleaned subject and the keys of the functions it
changed), once per commit id, shared by every snapshot; ``riido.window_commits``
holds each snapshot's window, its revision's last 1,000 non-merge commits in order,
each with its subject's lexemes under the snapshot's text search configuration and
the doc_ords of the snapshot's documents with one of its keys
(:mod:`riido_pg.extract.similar`, docs/evaluation.md "History similarity"). A load
of a git revision stores them; every other snapshot has no window, and ranks as
before. Upgrading installs :mod:`riido_pg.server.search_functions` again:
``riido.search_fusion`` takes the snapshot's id, the prior's factor β and BM25's k1
and b for the subjects as new last arguments, so its former signature is dropped
first, and the settings gain ``structure_history_prior``, ``history_k1`` and
``history_b``. Downgrading drops both tables and ``riido.search``'s functions
(upgrading installs them again), as 0020's downgrade does.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "2228e974cc53e54ea6b78035860c3524562648e7be62fbf06d3fc86dc845b0ed"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute(
        'CREATE TABLE riido.commits (commit text COLLATE "C" NOT NULL, subject text NOT NULL, '
        "keys text[] NOT NULL, CONSTRAINT commits_pkey PRIMARY KEY (commit))"
    )
    conn.execute(
        'CREATE TABLE riido.window_commits (snapshot_id text COLLATE "C" NOT NULL, '
        'position integer NOT NULL, commit text COLLATE "C" NOT NULL, '
        "lexemes text[] NOT NULL, doc_ords integer[] NOT NULL, "
        "CONSTRAINT window_commits_pkey PRIMARY KEY (snapshot_id, position), "
        "CONSTRAINT window_commits_snapshot_id_fkey FOREIGN KEY (snapshot_id) "
        "REFERENCES riido.snapshots (snapshot_id) ON DELETE CASCADE, "
        "CONSTRAINT window_commits_commit_fkey FOREIGN KEY (commit) "
        "REFERENCES riido.commits (commit))"
    )
    search_functions.reinstall(
        conn,
        (
            # the snapshot, β and the subjects' k1 and b are new last arguments
            "search_fusion(uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, "
            "text[], integer, text, float8, float8, float8, float8, float8, regconfig, float8, "
            "integer[], float8)",
        ),
    )


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
    conn.execute("DROP TABLE riido.window_commits")
    conn.execute("DROP TABLE riido.commits")
