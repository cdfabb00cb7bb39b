"""A document's qualified name, for structure_bm25's name match.

``riido.qualified_words(doc_id)`` is ``riido.name_words`` of the last ``:``-separated
part of a document id once a trailing ``:LINE`` (or ``:LINE#N``) is dropped (a
function's qualified name, ``Context.invoke``), or ``''`` when the id has no ``:``;
its Python twin is ``riido_pg.fields.qualified_words``. It depends on nothing but the
id, so nothing is stored: the ranking reads it for the documents whose name field
matches a question.

Installs this package's ``sql/search.sql`` again (``riido.search`` ranks
``structure_bm25`` with the name match); :data:`INSTALLS` records its digest
(tests/test_sql_search.py). Downgrading keeps both: the search functions of revision
0014 are not stored anywhere to go back to, and these call ``riido.qualified_words``.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

from alembic import op

from riido_pg.server import search_functions

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

#: :func:`digest` as of this revision.
INSTALLS = "10fc11eb5bd656ef2df7a9fcb9ba7486c59398e21407f8d6832e620360d91ef3"
digest = search_functions.digest

_QUALIFIED_WORDS = r"""
CREATE OR REPLACE FUNCTION riido.qualified_words(doc_id text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN strpos(h, ':') > 0 THEN riido.name_words(regexp_replace(h, '^.*:', ''))
            ELSE '' END
FROM (SELECT regexp_replace(doc_id, ':[0-9]+(#[0-9]+)?$', '') AS h) AS x
$$
"""

_OLD_FUSION = """
DROP FUNCTION IF EXISTS riido.search_fusion(
    uuid[], integer[], bigint, bigint, float8, float8, text[], bigint, text[], integer, text,
    float8, float8, float8, float8)
"""


def upgrade() -> None:
    op.execute(_QUALIFIED_WORDS)
    op.execute(_OLD_FUSION)  # its signature grows by the name match's two arguments
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    search_functions.install(conn, again=True)


def downgrade() -> None:
    pass
