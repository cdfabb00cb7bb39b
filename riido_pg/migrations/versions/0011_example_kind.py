"""Kinds beyond tests: documentation, example, demo, sample and benchmark code.

A document has kind ``example`` when the path part of its id (before the first
``:``) lies in a directory named ``doc``, ``docs``, ``documentation``, ``example``,
``examples``, ``demo``, ``demos``, ``sample``, ``samples``, ``benchmark`` or
``benchmarks`` (``riido.example_path``, the rule of
``riido_pg.extract.paths.is_doc_or_example_path``; its Python twin is
``riido_pg.fields.is_example_id``). Like kind ``test`` (migration ``0010``) it is one
``kind`` postings row per segment, lexeme ``example``, listing the segment's
documents of that kind: a function of the document id, so it travels with the
content. The upgrade builds it for every stored segment; the downgrade removes it.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0011"
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

_BACKFILL_KIND = """
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'kind', 'example', array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(1::smallint), array_agg(1)
FROM riido.documents AS d
WHERE riido.example_path(split_part(d.doc_id, ':', 1))
GROUP BY d.segment_id
"""


def upgrade() -> None:
    op.execute(_EXAMPLE_PATH)
    op.execute(_BACKFILL_KIND)


def downgrade() -> None:
    op.execute("DELETE FROM riido.postings WHERE col = 'kind' AND lexeme = 'example'")
    op.execute("DROP FUNCTION riido.example_path(text)")
