"""Snapshots on a shared base: documents and postings live in segments.

A *segment* is an immutable set of documents with their postings (README "Snapshots
on a base"). A snapshot is a path of segments (``riido.snapshot_segments``: the
segments of its base, then its own) minus the documents it removed
(``riido.snapshots.removed``, their ``doc_ord`` values). A self-contained snapshot
is a path of one segment. Postings keep what BM25 needs before any snapshot-wide
statistic: each document's term frequency and length (``tfs``, ``dls``); N, avgdl
and each lexeme's df are derived for the snapshot at query time, so a segment never
needs rewriting when another snapshot uses it.

``doc_ord`` numbers documents within the path they belong to: a segment's documents
hold ``first_ord .. first_ord + documents - 1`` in id byte order, after every ord of
the segments before it on its path, so one ``int`` names a document of a snapshot.
Embeddings move to segments too (``riido.segment_models``), since a vector belongs to
a document, not to each snapshot holding it. The hidden ``replacing`` rows of a
parallel ``--replace`` are gone: new content is written into a new segment that no
snapshot references until the swap.

The upgrade turns every snapshot into one segment and rebuilds its postings; the
downgrade expands every snapshot into its own documents and postings again.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# one column's new postings for the documents of table {src} (segment_id, doc_ord,
# text_key), as sql/segment_postings.sql writes them
_POSTINGS = """
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, '{col}', u.lexeme,
       array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(cardinality(u.positions)::smallint ORDER BY d.doc_ord),
       array_agg(t.len_{col} ORDER BY d.doc_ord)
FROM {src} AS d
JOIN riido.texts AS t ON t.key = d.text_key
CROSS JOIN LATERAL unnest(t.tsv_{col}) AS u
GROUP BY d.segment_id, u.lexeme
"""

# one column's old postings (0006–0008 form) for old-form documents
_OLD_POSTINGS = """
WITH stats AS (
    SELECT d.snapshot_id, count(*) AS n, coalesce(avg(t.len_{col}), 0)::float8 AS avgdl
    FROM riido.documents AS d JOIN riido.texts AS t ON t.key = d.text_key
    GROUP BY d.snapshot_id
)
INSERT INTO riido.postings (snapshot_id, col, lexeme, df, idf, doc_ords, tfn)
SELECT d.snapshot_id, '{col}', u.lexeme, count(*),
       ln(1 + (s.n - count(*) + 0.5) / (count(*) + 0.5)),
       array_agg(d.doc_ord),
       array_agg(cardinality(u.positions)::float8
                 / (cardinality(u.positions) + sn.k1 * (1 - sn.b + sn.b * t.len_{col} / s.avgdl)))
FROM riido.documents AS d
JOIN riido.texts AS t ON t.key = d.text_key
JOIN riido.snapshots AS sn ON sn.snapshot_id = d.snapshot_id
JOIN stats AS s ON s.snapshot_id = d.snapshot_id
CROSS JOIN LATERAL unnest(t.tsv_{col}) AS u
GROUP BY d.snapshot_id, u.lexeme, s.n, s.avgdl
"""


def upgrade() -> None:
    x = op.execute
    x("DELETE FROM riido.snapshots WHERE state = 'replacing'")
    x("ALTER TABLE riido.snapshots DROP CONSTRAINT snapshots_state_check")
    x(
        "ALTER TABLE riido.snapshots ADD CONSTRAINT snapshots_state_check "
        "CHECK (state IN ('loading', 'ready'))"
    )
    x(
        "ALTER TABLE riido.snapshots "
        "ADD COLUMN removed integer[] NOT NULL DEFAULT '{}', "
        "ADD COLUMN len_raw bigint NOT NULL DEFAULT 0, "
        "ADD COLUMN len_ident bigint NOT NULL DEFAULT 0, "
        'ADD COLUMN base text COLLATE "C", '
        "ADD COLUMN added integer NOT NULL DEFAULT 0"
    )
    x("ALTER TABLE riido.snapshots ALTER COLUMN removed SET STORAGE EXTERNAL")
    x(
        "CREATE TABLE riido.segments ("
        " segment_id uuid PRIMARY KEY,"
        " first_ord integer NOT NULL,"
        " documents integer NOT NULL,"
        " len_raw bigint NOT NULL,"
        " len_ident bigint NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())"
    )
    x(
        "CREATE TABLE riido.snapshot_segments ("
        ' snapshot_id text COLLATE "C" NOT NULL'
        "   REFERENCES riido.snapshots (snapshot_id) ON DELETE CASCADE,"
        " position smallint NOT NULL,"
        " segment_id uuid NOT NULL REFERENCES riido.segments (segment_id),"
        " PRIMARY KEY (snapshot_id, position))"
    )
    x("CREATE INDEX snapshot_segments_segment_id_idx ON riido.snapshot_segments (segment_id)")
    # one segment per snapshot, its documents keep their ords
    x(
        "CREATE TEMP TABLE riido_seg ON COMMIT DROP AS "
        "SELECT snapshot_id, gen_random_uuid() AS segment_id FROM riido.snapshots"
    )
    x(
        "INSERT INTO riido.segments (segment_id, first_ord, documents, len_raw, len_ident) "
        "SELECT g.segment_id, 0, count(d.doc_ord), coalesce(sum(t.len_raw), 0), "
        "coalesce(sum(t.len_ident), 0) FROM riido_seg AS g "
        "LEFT JOIN riido.documents AS d ON d.snapshot_id = g.snapshot_id "
        "LEFT JOIN riido.texts AS t ON t.key = d.text_key GROUP BY g.segment_id"
    )
    x(
        "UPDATE riido.snapshots AS s SET len_raw = g.len_raw, len_ident = g.len_ident, "
        "added = g.documents FROM riido_seg AS r JOIN riido.segments AS g USING (segment_id) "
        "WHERE r.snapshot_id = s.snapshot_id"
    )
    x(
        "INSERT INTO riido.snapshot_segments (snapshot_id, position, segment_id) "
        "SELECT snapshot_id, 0, segment_id FROM riido_seg"
    )
    # documents: keyed by segment
    x("ALTER TABLE riido.targets DROP CONSTRAINT targets_document_fkey")
    x("ALTER TABLE riido.documents ADD COLUMN segment_id uuid")
    x(
        "UPDATE riido.documents AS d SET segment_id = r.segment_id FROM riido_seg AS r "
        "WHERE r.snapshot_id = d.snapshot_id"
    )
    x("ALTER TABLE riido.documents DROP CONSTRAINT documents_snapshot_id_doc_id_key")
    x("ALTER TABLE riido.documents DROP CONSTRAINT documents_pkey")
    x("ALTER TABLE riido.documents DROP COLUMN snapshot_id")
    x("ALTER TABLE riido.documents ALTER COLUMN segment_id SET NOT NULL")
    x("ALTER TABLE riido.documents ADD PRIMARY KEY (segment_id, doc_ord)")
    x(
        "ALTER TABLE riido.documents ADD CONSTRAINT documents_segment_id_doc_id_key "
        "UNIQUE (segment_id, doc_id)"
    )
    x(
        "ALTER TABLE riido.documents ADD CONSTRAINT documents_segment_id_fkey "
        "FOREIGN KEY (segment_id) REFERENCES riido.segments (segment_id) ON DELETE CASCADE"
    )
    # postings: term frequencies and lengths per segment, rebuilt from the texts
    x("DROP TABLE riido.postings")
    x(
        "CREATE TABLE riido.postings ("
        " segment_id uuid NOT NULL REFERENCES riido.segments (segment_id) ON DELETE CASCADE,"
        " col text NOT NULL CONSTRAINT postings_col_check CHECK (col IN ('raw', 'ident')),"
        ' lexeme text COLLATE "C" NOT NULL,'
        " doc_ords integer[] NOT NULL,"
        " tfs smallint[] NOT NULL,"
        " dls integer[] NOT NULL,"
        " PRIMARY KEY (segment_id, col, lexeme))"
    )
    for column in ("doc_ords", "tfs", "dls"):
        x(f"ALTER TABLE riido.postings ALTER COLUMN {column} SET STATISTICS 0")
    for col in ("raw", "ident"):
        x(_POSTINGS.format(col=col, src="riido.documents"))
    # embeddings: per segment
    x(
        "CREATE TABLE riido.segment_models ("
        " segment_id uuid NOT NULL REFERENCES riido.segments (segment_id) ON DELETE CASCADE,"
        ' model text COLLATE "C" NOT NULL,'
        " dim integer NOT NULL,"
        " PRIMARY KEY (segment_id, model))"
    )
    x(
        "INSERT INTO riido.segment_models (segment_id, model, dim) "
        "SELECT r.segment_id, m.model, m.dim FROM riido.snapshot_models AS m "
        "JOIN riido_seg AS r USING (snapshot_id)"
    )
    x("ALTER TABLE riido.embeddings DROP CONSTRAINT embeddings_snapshot_model_fkey")
    x("ALTER TABLE riido.embeddings ADD COLUMN segment_id uuid")
    x(
        "UPDATE riido.embeddings AS e SET segment_id = r.segment_id FROM riido_seg AS r "
        "WHERE r.snapshot_id = e.snapshot_id"
    )
    x("ALTER TABLE riido.embeddings DROP CONSTRAINT embeddings_pkey")
    x("ALTER TABLE riido.embeddings DROP COLUMN snapshot_id")
    x("ALTER TABLE riido.embeddings ALTER COLUMN segment_id SET NOT NULL")
    x("ALTER TABLE riido.embeddings ADD PRIMARY KEY (segment_id, model, doc_ord)")
    x(
        "ALTER TABLE riido.embeddings ADD CONSTRAINT embeddings_segment_model_fkey "
        "FOREIGN KEY (segment_id, model) REFERENCES riido.segment_models (segment_id, model) "
        "ON DELETE CASCADE"
    )


def downgrade() -> None:
    x = op.execute
    # every snapshot's own documents again, numbered densely in id order
    x(
        "CREATE TEMP TABLE riido_docs ON COMMIT DROP AS "
        "SELECT s.snapshot_id, d.segment_id, d.doc_ord AS old_ord, d.doc_id, d.text_key, "
        "(row_number() OVER (PARTITION BY s.snapshot_id ORDER BY d.doc_id) - 1)::int AS doc_ord "
        "FROM riido.snapshots AS s JOIN riido.snapshot_segments AS p USING (snapshot_id) "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "WHERE NOT EXISTS (SELECT 1 FROM unnest(s.removed) AS r(o) WHERE r.o = d.doc_ord)"
    )
    x("DROP TABLE riido.postings")
    x("ALTER TABLE riido.embeddings DROP CONSTRAINT embeddings_segment_model_fkey")
    x("ALTER TABLE riido.embeddings DROP CONSTRAINT embeddings_pkey")
    x("CREATE TEMP TABLE riido_vecs ON COMMIT DROP AS SELECT * FROM riido.embeddings")
    x("DELETE FROM riido.embeddings")
    x("ALTER TABLE riido.embeddings DROP COLUMN segment_id")
    x('ALTER TABLE riido.embeddings ADD COLUMN snapshot_id text COLLATE "C" NOT NULL')
    x(
        "INSERT INTO riido.embeddings (snapshot_id, model, doc_ord, vec) "
        "SELECT d.snapshot_id, v.model, d.doc_ord, v.vec FROM riido_docs AS d "
        "JOIN riido_vecs AS v ON v.segment_id = d.segment_id AND v.doc_ord = d.old_ord "
        "JOIN riido.snapshot_models AS m ON m.snapshot_id = d.snapshot_id AND m.model = v.model"
    )
    x("ALTER TABLE riido.embeddings ADD PRIMARY KEY (snapshot_id, model, doc_ord)")
    x(
        "ALTER TABLE riido.embeddings ADD CONSTRAINT embeddings_snapshot_model_fkey "
        "FOREIGN KEY (snapshot_id, model) "
        "REFERENCES riido.snapshot_models (snapshot_id, model) ON DELETE CASCADE"
    )
    x("DROP TABLE riido.segment_models")
    x("DROP TABLE riido.documents")
    x(
        "CREATE TABLE riido.documents ("
        ' snapshot_id text COLLATE "C" NOT NULL'
        "   REFERENCES riido.snapshots (snapshot_id) ON DELETE CASCADE,"
        " doc_ord integer NOT NULL,"
        ' doc_id text COLLATE "C" NOT NULL,'
        " text_key uuid NOT NULL,"
        " PRIMARY KEY (snapshot_id, doc_ord),"
        " CONSTRAINT documents_snapshot_id_doc_id_key UNIQUE (snapshot_id, doc_id))"
    )
    x("CREATE INDEX documents_text_key_idx ON riido.documents (text_key)")
    x(
        "INSERT INTO riido.documents (snapshot_id, doc_ord, doc_id, text_key) "
        "SELECT snapshot_id, doc_ord, doc_id, text_key FROM riido_docs"
    )
    x(
        "CREATE TABLE riido.postings ("
        ' snapshot_id text COLLATE "C" NOT NULL'
        "   REFERENCES riido.snapshots (snapshot_id) ON DELETE CASCADE,"
        " col text NOT NULL CONSTRAINT postings_col_check CHECK (col IN ('raw', 'ident')),"
        ' lexeme text COLLATE "C" NOT NULL,'
        " df integer NOT NULL,"
        " idf double precision NOT NULL,"
        " doc_ords integer[] NOT NULL,"
        " tfn double precision[] NOT NULL,"
        " PRIMARY KEY (snapshot_id, col, lexeme))"
    )
    x("ALTER TABLE riido.postings ALTER COLUMN doc_ords SET STORAGE EXTERNAL")
    x("ALTER TABLE riido.postings ALTER COLUMN tfn SET STORAGE EXTERNAL")
    for column in ("df", "idf", "doc_ords", "tfn"):
        x(f"ALTER TABLE riido.postings ALTER COLUMN {column} SET STATISTICS 0")
    for col in ("raw", "ident"):
        x(_OLD_POSTINGS.format(col=col))
    x(
        "ALTER TABLE riido.targets ADD CONSTRAINT targets_document_fkey "
        "FOREIGN KEY (snapshot_id, doc_id) REFERENCES riido.documents (snapshot_id, doc_id) "
        "ON DELETE CASCADE"
    )
    x("DROP TABLE riido.snapshot_segments")
    x("DROP TABLE riido.segments")
    x(
        "ALTER TABLE riido.snapshots DROP COLUMN removed, DROP COLUMN len_raw, "
        "DROP COLUMN len_ident, DROP COLUMN base, DROP COLUMN added"
    )
    x("ALTER TABLE riido.snapshots DROP CONSTRAINT snapshots_state_check")
    x(
        "ALTER TABLE riido.snapshots ADD CONSTRAINT snapshots_state_check "
        "CHECK (state IN ('loading', 'ready', 'replacing'))"
    )
