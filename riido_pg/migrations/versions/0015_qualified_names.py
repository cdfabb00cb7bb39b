"""A document's qualified name, for structure_bm25's name match.

``riido.qualified_words(doc_id)`` is ``riido.name_words`` of the last ``:``-separated
part of a document id once a trailing ``:LINE`` (or ``:LINE#N``) is dropped (a
function's qualified name, ``Context.invoke``), or ``''`` when the id has no ``:``;
its Python twin is ``riido_pg.fields.qualified_words``. It depends on nothing but the
id, so nothing is stored: the ranking reads it for the documents whose name field
matches a question. ``riido.search`` ranks ``structure_bm25`` with the name match once
the next revision (0016) installs ``sql/search.sql`` again. Downgrading drops it.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_QUALIFIED_WORDS = r"""
CREATE OR REPLACE FUNCTION riido.qualified_words(doc_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN strpos(h, ':') > 0 THEN riido.name_words(regexp_replace(h, '^.*:', ''))
            ELSE '' END
FROM (SELECT regexp_replace(doc_id, ':[0-9]+(#[0-9]+)?$', '') AS h) AS x
$$
"""


def upgrade() -> None:
    op.execute(_QUALIFIED_WORDS)


def downgrade() -> None:
    op.execute("DROP FUNCTION riido.qualified_words(text)")
