"""What a migration installs for search from SQL (docs/search-from-sql.md):
``sql/search.sql`` and ``riido.search_settings()``, the policies' constants and the
query limits read from the Python that runs the upgrade, so that the SQL ranks as
that Python does.

A change to either needs a migration that installs them again (a database upgraded
before the change keeps what its last migration installed): such a migration records
:func:`digest` as of its revision in ``INSTALLS``, and tests/test_sql_search.py fails
when the newest recorded digest is not the package's. search.sql creates its functions
with ``CREATE OR REPLACE``, so installing again keeps the privileges granted on them
(``riido-pg db grant-reader``); a function whose arguments or result change must be
dropped by its migration first.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from psycopg import Connection, sql

from riido_pg.documents import MAX_QUERY_BYTES
from riido_pg.extract.similar import CHANGE_TAU, SIMILAR_B, SIMILAR_K1
from riido_pg.fields import EXAMPLE_WORDS, TEST_WORDS
from riido_pg.ranking.bm25 import SCALE
from riido_pg.ranking.policies import (
    FUSED_WEIGHT,
    MODEL_OUT_OF_SCOPE,
    MODEL_STRUCTURE_OUT_OF_SCOPE,
    OUT_OF_SCOPE,
    RRF_K,
    STRUCTURE_CHANGE_PRIOR,
    STRUCTURE_EXAMPLE_PRIOR,
    STRUCTURE_HISTORY_PRIOR,
    STRUCTURE_LENGTH_PRIOR,
    STRUCTURE_NAME_MATCH,
    STRUCTURE_RECENT_PRIOR,
    STRUCTURE_TEST_PRIOR,
    STRUCTURE_W_IDENT,
    STRUCTURE_W_NAME,
)
from riido_pg.ranking.rank import IN_SQL
from riido_pg.ranking.terms import MAX_IDENTIFIER_QUERY_BYTES, MAX_IDENTIFIER_QUERY_LEXEMES
from riido_pg.resources import sql_text

__all__ = ["digest", "drop", "install", "reinstall", "settings"]


def _values() -> list[tuple[str, str, Any]]:
    return [
        ("max_query_bytes", "integer", MAX_QUERY_BYTES),
        ("max_identifier_lexemes", "integer", MAX_IDENTIFIER_QUERY_LEXEMES),
        ("max_identifier_bytes", "integer", MAX_IDENTIFIER_QUERY_BYTES),
        ("labels", "text[]", [OUT_OF_SCOPE, MODEL_OUT_OF_SCOPE, MODEL_STRUCTURE_OUT_OF_SCOPE]),
        ("scale", "float8", SCALE),
        ("fused_weight", "float8", FUSED_WEIGHT),
        ("rrf_k", "float8", RRF_K),
        ("structure_w_ident", "float8", STRUCTURE_W_IDENT),
        ("structure_w_name", "float8", STRUCTURE_W_NAME),
        ("structure_test_prior", "float8", STRUCTURE_TEST_PRIOR),
        ("structure_example_prior", "float8", STRUCTURE_EXAMPLE_PRIOR),
        ("structure_name_match", "float8", STRUCTURE_NAME_MATCH),
        ("structure_length_prior", "float8", STRUCTURE_LENGTH_PRIOR),
        ("structure_recent_prior", "float8", STRUCTURE_RECENT_PRIOR),
        ("structure_history_prior", "float8", STRUCTURE_HISTORY_PRIOR),
        ("history_k1", "float8", SIMILAR_K1),
        ("history_b", "float8", SIMILAR_B),
        ("structure_change_prior", "float8", STRUCTURE_CHANGE_PRIOR),
        ("change_tau", "float8", CHANGE_TAU),
        ("test_words", "text[]", sorted(TEST_WORDS)),
        ("example_words", "text[]", sorted(EXAMPLE_WORDS)),
        ("policies", "text[]", list(IN_SQL)),
    ]


def digest() -> str:
    """The sha256 of ``sql/search.sql`` and the settings' values (not of the splitter's
    classes, which follow the running Python's Unicode version)."""
    text = sql_text("search") + repr(_values())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def settings() -> sql.Composed:
    """``CREATE FUNCTION riido.search_settings()`` with this package's values."""
    values = _values()
    columns = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind)) for name, kind, _ in values
    )
    selected = sql.SQL(", ").join(
        sql.SQL("{}::{}").format(sql.Literal(value), sql.SQL(kind)) for _, kind, value in values
    )
    return sql.SQL(
        "CREATE FUNCTION riido.search_settings() RETURNS TABLE ({}) "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT {} $$"
    ).format(columns, selected)


def install(conn: Connection[Any], *, again: bool) -> None:
    """Create riido.search_settings() and sql/search.sql's functions; ``again``: they
    exist already (the settings are dropped first: their columns may have changed)."""
    if again:
        conn.execute("DROP FUNCTION riido.search_settings()")
    conn.execute(settings())
    conn.execute(sql_text("search"))


def reinstall(conn: Connection[Any], dropped: tuple[str, ...]) -> None:
    """Install the functions again (a migration's upgrade), first dropping those of
    ``dropped`` (signatures, ``riido.`` omitted) whose arguments or result change, and
    the settings (their columns may have changed). Each only if it exists: a
    migration whose downgrade dropped every function (:func:`drop`) is upgraded
    again from a schema without them."""
    for signature in (*dropped, "search_settings()"):
        conn.execute(f"DROP FUNCTION IF EXISTS riido.{signature}")
    install(conn, again=False)


def drop(conn: Connection[Any]) -> None:
    """Drop riido.search_settings() and every function sql/search.sql creates (each
    overload, whatever its arguments)."""
    names = [
        "search_settings",
        *re.findall(r"^CREATE OR REPLACE FUNCTION riido\.(\w+)\(", sql_text("search"), flags=re.M),
    ]
    found = conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc AS p "
        "JOIN pg_namespace AS n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'riido' AND p.proname = ANY(%s)",
        (names,),
    ).fetchall()
    for (signature,) in found:
        conn.execute(sql.SQL("DROP FUNCTION {}").format(sql.SQL(signature)))
