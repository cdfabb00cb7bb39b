"""Test modules: a document whose qualified name lies in a test module (a container
named ``test`` or ``tests``, or ending in ``_test`` or ``_tests``: Rust's
``#[cfg(test)] mod tests`` inside a source file) has kind ``test`` as a document of a
test path does. ``riido.test_id(doc_id)`` is the rule (its Python twin:
``riido_pg.fields.is_test_id``); every load writes its segment's kind postings by
the same rule (``sql/segment_fields.sql`` writes it out rather than call the
function, since migration 0016 writes segments with that file before this revision
exists). Upgrading writes every stored segment's ``test`` kind row again by it, so
stored snapshots rank as a new load of them would; downgrading writes the rows again
by the path rule alone and drops the function.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_TEST_ID = r"""
CREATE FUNCTION riido.test_id(doc_id text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT riido.test_path(split_part(doc_id, ':', 1))
       OR regexp_replace(doc_id, ':[0-9]+(#[0-9]+)?$', '')
          ~ ':([^:]*[.])?([A-Za-z0-9_]*_)?tests?[.][^:]*$'
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


def upgrade() -> None:
    op.execute(_TEST_ID)
    op.execute(_REWRITE.format(rule="riido.test_id(d.doc_id)"))


def downgrade() -> None:
    op.execute(_REWRITE.format(rule="riido.test_path(split_part(d.doc_id, ':', 1))"))
    op.execute("DROP FUNCTION riido.test_id(text)")
