"""The qualified-name field, and kinds beyond tests: documentation, example, demo,
sample and benchmark code.

A document's *qualified name* (``riido.qual_words``, Python twin
``riido_pg.fields.qual_words``) is ``riido.name_words`` of what follows the first
``:`` of its id (empty without one): for a function extracted from a source tree,
its qualified name without the path. Postings gain the column ``qual``: its lexemes
under the snapshot's text search configuration, with term frequencies and lengths
like the name field's.

A document has kind ``example`` when the path part of its id (before the first
``:``) lies in a directory named ``doc``, ``docs``, ``documentation``, ``example``,
``examples``, ``demo``, ``demos``, ``sample``, ``samples``, ``benchmark`` or
``benchmarks`` (``riido.example_path``, the rule of
``riido_pg.extract.paths.is_doc_or_example_path``; its Python twin is
``riido_pg.fields.is_example_id``). Like kind ``test`` (migration ``0010``) it is one
``kind`` postings row per segment, lexeme ``example``, listing the segment's
documents of that kind: a function of the document id, so it travels with the
content. The upgrade builds both for every stored segment; the downgrade removes them.

Revision ID: 0014
Revises: 0010
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0010"
branch_labels = None
depends_on = None

_EXAMPLE_PATH = r"""
CREATE FUNCTION riido.example_path(path text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT coalesce((string_to_array(path, '/'))[1:cardinality(string_to_array(path, '/')) - 1]
       && ARRAY['doc', 'docs', 'documentation', 'example', 'examples', 'demo', 'demos',
                'sample', 'samples', 'benchmark', 'benchmarks'], false)
$$
"""

_QUAL_WORDS = r"""
CREATE FUNCTION riido.qual_words(doc_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN strpos(doc_id, ':') = 0 THEN ''
            ELSE riido.name_words(substr(doc_id, strpos(doc_id, ':') + 1)) END
$$
"""

# every stored segment's qual postings, as sql/segment_fields.sql writes a new
# segment's (a segment's text configuration is that of the snapshots holding it)
_BACKFILL_QUAL = """
WITH configs AS (
    SELECT DISTINCT ON (p.segment_id) p.segment_id, s.text_config
    FROM riido.snapshot_segments AS p
    JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id
    ORDER BY p.segment_id, s.snapshot_id
)
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'qual', u.lexeme, array_agg(d.doc_ord),
       array_agg(cardinality(u.positions)::smallint), array_agg(v.len)
FROM riido.documents AS d
JOIN configs AS c ON c.segment_id = d.segment_id
CROSS JOIN LATERAL (
    SELECT x.tsv, (SELECT coalesce(sum(cardinality(y.positions)), 0)
                   FROM unnest(x.tsv) AS y)::int AS len
    FROM (SELECT to_tsvector(c.text_config::regconfig, riido.qual_words(d.doc_id)) AS tsv
          OFFSET 0) AS x
) AS v
CROSS JOIN LATERAL unnest(v.tsv) AS u
GROUP BY d.segment_id, u.lexeme
"""

_BACKFILL_KIND = """
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'kind', 'example', array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(1::smallint), array_agg(1)
FROM riido.documents AS d
WHERE riido.example_path(split_part(d.doc_id, ':', 1))
GROUP BY d.segment_id
"""


def _columns(cols: str) -> None:
    op.execute("ALTER TABLE riido.postings DROP CONSTRAINT postings_col_check")
    op.execute(
        f"ALTER TABLE riido.postings ADD CONSTRAINT postings_col_check CHECK (col IN ({cols}))"
    )


def upgrade() -> None:
    _columns("'raw', 'ident', 'name', 'kind', 'qual'")
    op.execute(_QUAL_WORDS)
    op.execute(_EXAMPLE_PATH)
    op.execute(_BACKFILL_QUAL)
    op.execute(_BACKFILL_KIND)


def downgrade() -> None:
    op.execute("DELETE FROM riido.postings WHERE col = 'qual'")
    op.execute("DELETE FROM riido.postings WHERE col = 'kind' AND lexeme = 'example'")
    _columns("'raw', 'ident', 'name', 'kind'")
    op.execute("DROP FUNCTION riido.example_path(text)")
    op.execute("DROP FUNCTION riido.qual_words(text)")
