"""Least privilege: a read-only role for querying snapshots (``sql/grant_reader.sql``)."""

from __future__ import annotations

from psycopg import sql

from riido_pg.errors import Hint, InvalidInput
from riido_pg.quoting import sql_ident
from riido_pg.resources import sql_template
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated

__all__ = ["grant_reader"]


@translated
def grant_reader(conn: Conn, role: str) -> None:
    """Grant ``role`` (an existing role) read-only access to riido's snapshots."""
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if exists is None:
        raise InvalidInput(
            f"no role {role!r}",
            Hint.same(f"create it first, e.g. CREATE ROLE {sql_ident(role)} LOGIN"),
        )
    statements = sql.SQL(sql_template("grant_reader")).format(role=sql.Identifier(role))
    with conn.transaction():
        conn.execute(statements)
