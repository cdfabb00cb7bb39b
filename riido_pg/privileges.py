"""Least privilege: a read-only role for querying snapshots (``sql/grant_reader.sql``)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from riido_pg.errors import InvalidInput
from riido_pg.resources import sql_text

__all__ = ["grant_reader"]


def grant_reader(conn: psycopg.Connection[Any], role: str) -> None:
    """Grant ``role`` (an existing role) read-only access to riido's snapshots."""
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if exists is None:
        raise InvalidInput(f"no role {role!r}; create it first, e.g. CREATE ROLE {role} LOGIN")
    statements = sql.SQL(sql_text("grant_reader")).format(role=sql.Identifier(role))
    with conn.transaction():
        conn.execute(statements)
