"""Rust test attributes: a Rust function whose leading attributes mark it as a test
(``#[test]``, any attribute path ending in ``test`` such as ``#[tokio::test]`` or
``#[rstest]``, or ``#[cfg(test)]``) has kind ``test`` wherever it lies, as a function
of a test path or a test module does. ``riido.test_document(doc_id, body)`` is the
rule (its Python twin: ``riido_pg.fields.is_test_document``): ``riido.test_id`` of
the id, or a ``.rs`` path part and the attribute in the text's leading lines (the
regular expression ``riido_pg.fields.TEST_ATTRIBUTE``). The kind is still a function
of the stored content (the id and the text it keeps), so a segment serves every
snapshot holding it. Every load writes its segment's kind postings by the same rule
(``sql/segment_fields.sql`` writes it out); upgrading writes every stored segment's
``test`` kind row again by it, so stored snapshots rank as a new load of them would;
downgrading writes the rows again by ``riido.test_id`` and drops the function.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

# riido_pg.fields.TEST_ATTRIBUTE as it stands at this revision
_TEST_ATTRIBUTE = (
    r"^(?:[ \t]*(?://|/\*|\*|#!?\[)[^\n]*\n|[ \t]*\n)*"
    r"[ \t]*#\[[ \t]*(?:(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*::[ \t]*)*[A-Za-z0-9_]*test[ \t]*[](]"
    r"|cfg[ \t]*\([ \t]*test[ \t]*\)[ \t]*\])"
)

_TEST_DOCUMENT = rf"""
CREATE FUNCTION riido.test_document(doc_id text, body text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT riido.test_id(doc_id)
       OR (right(split_part(doc_id, ':', 1), 3) = '.rs' AND body ~ '{_TEST_ATTRIBUTE}')
$$
"""

# every stored segment's test kind row, written again by a rule (as
# sql/segment_fields.sql writes a new segment's)
_REWRITE = """
DELETE FROM riido.postings WHERE col = 'kind' AND lexeme = 'test';
INSERT INTO riido.postings (segment_id, col, lexeme, doc_ords, tfs, dls)
SELECT d.segment_id, 'kind', 'test', array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(1::smallint), array_agg(1)
FROM riido.documents AS d
WHERE {rule}
GROUP BY d.segment_id
"""
# riido.test_document, reading the text only for a .rs path part
_BY_DOCUMENT = """riido.test_id(d.doc_id)
   OR (right(split_part(d.doc_id, ':', 1), 3) = '.rs'
       AND EXISTS (SELECT 1 FROM riido.texts AS t
                   WHERE t.key = d.text_key AND riido.test_document(d.doc_id, t.body)))"""


def upgrade() -> None:
    op.execute(_TEST_DOCUMENT)
    op.execute(_REWRITE.format(rule=_BY_DOCUMENT))


def downgrade() -> None:
    op.execute(_REWRITE.format(rule="riido.test_id(d.doc_id)"))
    op.execute("DROP FUNCTION riido.test_document(text, text)")
