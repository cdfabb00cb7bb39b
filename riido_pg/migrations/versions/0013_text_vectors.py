"""Vectors keyed by content: one per (text, model), shared by every document holding it.

Until now a vector belonged to a document of a segment (``riido.embeddings`` keyed by
segment and ``doc_ord``, ``riido.segment_models`` marking a segment embedded), so a
function unchanged since an earlier snapshot but stored again in a later segment (a
commit that touched its file, a snapshot loaded ``--fresh``, a copy of the same text
anywhere) was embedded again. ``riido.text_vectors`` holds one vector per text key
(``riido.texts``, which keys a text by its content) and model: a snapshot embeds only
the texts no vector exists for, so a commit costs only its changed functions. A
vector goes with its text (ON DELETE CASCADE: the collector removes both).

``riido.snapshot_models`` gains ``texts_embedded``: how many texts embedding that
snapshot computed (the rest were reused), NULL for snapshots embedded before this
revision.

The upgrade keeps every stored vector (one per text and model); the downgrade
rebuilds the per-segment form for the segments whose documents all have a vector,
and forgets the models of the snapshots holding any other segment (embed them again).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    x = op.execute
    x(
        "CREATE TABLE riido.text_vectors ("
        " text_key uuid NOT NULL REFERENCES riido.texts (key) ON DELETE CASCADE,"
        ' model text COLLATE "C" NOT NULL,'
        " dim integer NOT NULL,"
        " vec bytea NOT NULL,"
        " PRIMARY KEY (text_key, model),"
        " CONSTRAINT text_vectors_dim_check CHECK (octet_length(vec) = 4 * dim))"
    )
    # vectors are read whole and do not compress
    x("ALTER TABLE riido.text_vectors ALTER COLUMN vec SET STORAGE EXTERNAL")
    x(
        "INSERT INTO riido.text_vectors (text_key, model, dim, vec) "
        "SELECT DISTINCT ON (d.text_key, e.model) d.text_key, e.model, m.dim, e.vec "
        "FROM riido.embeddings AS e "
        "JOIN riido.segment_models AS m ON m.segment_id = e.segment_id AND m.model = e.model "
        "JOIN riido.documents AS d ON d.segment_id = e.segment_id AND d.doc_ord = e.doc_ord "
        "WHERE octet_length(e.vec) = 4 * m.dim "
        "ORDER BY d.text_key, e.model, e.segment_id"
    )
    x("DROP TABLE riido.embeddings")
    x("DROP TABLE riido.segment_models")
    x("ALTER TABLE riido.snapshot_models ADD COLUMN texts_embedded integer")


def downgrade() -> None:
    x = op.execute
    x("ALTER TABLE riido.snapshot_models DROP COLUMN texts_embedded")
    x(
        "CREATE TABLE riido.segment_models ("
        " segment_id uuid NOT NULL REFERENCES riido.segments (segment_id) ON DELETE CASCADE,"
        ' model text COLLATE "C" NOT NULL,'
        " dim integer NOT NULL,"
        " PRIMARY KEY (segment_id, model))"
    )
    x(
        "CREATE TABLE riido.embeddings ("
        " segment_id uuid NOT NULL,"
        ' model text COLLATE "C" NOT NULL,'
        " doc_ord integer NOT NULL,"
        " vec bytea NOT NULL,"
        " PRIMARY KEY (segment_id, model, doc_ord),"
        " CONSTRAINT embeddings_segment_model_fkey FOREIGN KEY (segment_id, model)"
        "   REFERENCES riido.segment_models (segment_id, model) ON DELETE CASCADE)"
    )
    x("ALTER TABLE riido.embeddings ALTER COLUMN vec SET STORAGE EXTERNAL")
    # a segment is embedded under a model when every one of its documents has a vector
    x(
        "INSERT INTO riido.segment_models (segment_id, model, dim) "
        "SELECT g.segment_id, m.model, m.dim "
        "FROM riido.segments AS g "
        "CROSS JOIN (SELECT model, min(dim) AS dim FROM riido.text_vectors GROUP BY model) AS m "
        "WHERE NOT EXISTS (SELECT 1 FROM riido.documents AS d WHERE d.segment_id = g.segment_id "
        "  AND NOT EXISTS (SELECT 1 FROM riido.text_vectors AS v "
        "                  WHERE v.text_key = d.text_key AND v.model = m.model AND v.dim = m.dim))"
    )
    x(
        "INSERT INTO riido.embeddings (segment_id, model, doc_ord, vec) "
        "SELECT d.segment_id, m.model, d.doc_ord, v.vec FROM riido.segment_models AS m "
        "JOIN riido.documents AS d ON d.segment_id = m.segment_id "
        "JOIN riido.text_vectors AS v ON v.text_key = d.text_key AND v.model = m.model"
    )
    x(
        "DELETE FROM riido.snapshot_models AS s WHERE EXISTS ("
        " SELECT 1 FROM riido.snapshot_segments AS p WHERE p.snapshot_id = s.snapshot_id"
        " AND NOT EXISTS (SELECT 1 FROM riido.segment_models AS m"
        "                 WHERE m.segment_id = p.segment_id AND m.model = s.model))"
    )
    x("DROP TABLE riido.text_vectors")
