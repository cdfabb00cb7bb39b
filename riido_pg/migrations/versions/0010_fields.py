"""Fields: a document's name and kind, beside its body's two columns.

A document's *name* is its id read as words (``riido.name_words``: a trailing
``:LINE`` dropped, split at case changes, between letters and digits and at every
other character, lowercased): for a function extracted from a source tree, whose id
is ``PATH:QUALNAME:LINE``, that is its path and qualified name. Its *kind* is
``test`` when the path part of its id (before the first ``:``) is a test path
(``riido.test_path``, the rule of ``riido_pg.extract.paths``). Both are functions
of the document id, which a segment's documents row keeps with the text key, so
they travel with the content: a snapshot on a base shares them with the segments it
shares, and a document whose id and text are unchanged is never indexed again.

Postings gain two columns: ``name`` (the name's lexemes under the snapshot's text
search configuration, with term frequencies and lengths like the body's columns) and
``kind`` (one row, lexeme ``test``, listing the segment's test documents). The
upgrade builds both for every stored segment; the downgrade removes them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# The Python twins are riido_pg.fields.name_words and is_test_id (tested equal).
_NAME_WORDS = r"""
CREATE FUNCTION riido.name_words(doc_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT lower(btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
       regexp_replace(regexp_replace(doc_id, ':[0-9]+$', ''),
       '([a-z])([A-Z])', '\1 \2', 'g'),
       '([A-Z])([A-Z][a-z])', '\1 \2', 'g'),
       '([A-Za-z])([0-9])', '\1 \2', 'g'),
       '([0-9])([A-Za-z])', '\1 \2', 'g'),
       '[^A-Za-z0-9]+', ' ', 'g')))
$$
"""

_TEST_PATH = r"""
CREATE FUNCTION riido.test_path(path text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    parts text[] := string_to_array(path, '/');
    name text := coalesce(parts[cardinality(parts)], '');
    stem text := split_part(name, '.', 1);
    dots text[] := string_to_array(name, '.');
BEGIN
    IF parts[1:cardinality(parts) - 1]
       && ARRAY['test', 'tests', 'testing', 'testdata', '__tests__', 'spec'] THEN
        RETURN true;
    END IF;
    IF starts_with(name, 'test_') OR name = 'conftest.py' THEN
        RETURN true;
    END IF;
    IF stem IN ('test', 'tests') OR stem ~ '(_test|_tests|_spec|_unittest|Test|Tests)$' THEN
        RETURN true;
    END IF;
    RETURN coalesce(dots[2:cardinality(dots) - 1] && ARRAY['test', 'spec'], false);
END
$$
"""

# every stored segment's name and kind postings, as sql/segment_fields.sql writes a
# new segment's (a segment's text configuration is that of the snapshots holding it)
_BACKFILL = """
WITH configs AS (
    SELECT DISTINCT ON (p.segment_id) p.segment_id, s.text_config
    FROM riido.snapshot_segments AS p
    JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id
    ORDER BY p.segment_id, s.snapshot_id
)
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'name', u.lexeme, array_agg(d.doc_ord),
       array_agg(cardinality(u.positions)::smallint), array_agg(v.len)
FROM riido.documents AS d
JOIN configs AS c ON c.segment_id = d.segment_id
CROSS JOIN LATERAL (
    SELECT x.tsv, (SELECT coalesce(sum(cardinality(y.positions)), 0)
                   FROM unnest(x.tsv) AS y)::int AS len
    FROM (SELECT to_tsvector(c.text_config::regconfig, riido.name_words(d.doc_id)) AS tsv
          OFFSET 0) AS x
) AS v
CROSS JOIN LATERAL unnest(v.tsv) AS u
GROUP BY d.segment_id, u.lexeme
"""

_BACKFILL_KIND = """
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'kind', 'test', array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(1::smallint), array_agg(1)
FROM riido.documents AS d
WHERE riido.test_path(split_part(d.doc_id, ':', 1))
GROUP BY d.segment_id
"""


def upgrade() -> None:
    x = op.execute
    x("ALTER TABLE riido.postings DROP CONSTRAINT postings_col_check")
    x(
        "ALTER TABLE riido.postings ADD CONSTRAINT postings_col_check "
        "CHECK (col IN ('raw', 'ident', 'name', 'kind'))"
    )
    x(_NAME_WORDS)
    x(_TEST_PATH)
    x(_BACKFILL)
    x(_BACKFILL_KIND)


def downgrade() -> None:
    x = op.execute
    x("DELETE FROM riido.postings WHERE col IN ('name', 'kind')")
    x("ALTER TABLE riido.postings DROP CONSTRAINT postings_col_check")
    x(
        "ALTER TABLE riido.postings ADD CONSTRAINT postings_col_check "
        "CHECK (col IN ('raw', 'ident'))"
    )
    x("DROP FUNCTION riido.test_path(text)")
    x("DROP FUNCTION riido.name_words(text)")
