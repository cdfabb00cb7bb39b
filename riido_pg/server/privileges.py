"""Least privilege: a read-only role for querying snapshots (``sql/grant_reader.sql``):
``SELECT`` on riido's tables and ``EXECUTE`` on its functions (``riido.search`` and
the functions it calls, all read-only and run with the caller's privileges).

riido-pg coordinates its writers with PostgreSQL's advisory locks (a snapshot's writer
lock, the texts lock loads share and the collector takes alone, the shard locks, the
migration lock). Every role may take any advisory lock while ``PUBLIC`` may execute
the lock functions, and revoking them from one role changes nothing while ``PUBLIC``
keeps them, so a reader could hold riido-pg's keys and stop every writer. A reader is
therefore made only where no one but the roles that write riido may take advisory
locks: :func:`grant_reader` revokes ``EXECUTE`` on the lock-taking functions from
``PUBLIC`` in this database, grants it to every role that writes riido (one with
``CREATE`` on schema ``riido`` or ``INSERT`` on ``riido.snapshots``; a superuser
needs no grant), and checks that the reader is left without it. Only a superuser may
change the privileges of those functions: for anyone else they must already be
revoked from ``PUBLIC`` (by an earlier ``grant-reader`` as a superuser), or nothing is
granted and :class:`~riido_pg.errors.PermissionDenied` says why.
"""

from __future__ import annotations

from psycopg import sql

from riido_pg.errors import Hint, InvalidInput, PermissionDenied
from riido_pg.quoting import shell_command, sql_ident
from riido_pg.resources import sql_template
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated

__all__ = ["LOCK_FUNCTIONS", "grant_reader"]

#: Every function that takes an advisory lock (``pg_catalog``), by its signature;
#: the unlock functions release only the caller's own locks and stay public.
LOCK_FUNCTIONS: tuple[str, ...] = tuple(
    f"pg_{try_}advisory_{xact}lock{shared}({args})"
    for try_ in ("", "try_")
    for xact in ("", "xact_")
    for shared in ("", "_shared")
    for args in ("bigint", "integer, integer")
)

_WRITERS = """
SELECT r.rolname FROM pg_roles r
WHERE NOT r.rolsuper AND r.rolname <> %(reader)s AND r.rolname !~ '^pg_'
  AND (has_schema_privilege(r.oid, 'riido', 'CREATE')
       OR has_table_privilege(r.oid, 'riido.snapshots', 'INSERT'))
ORDER BY 1
"""


def _functions() -> sql.Composable:
    return sql.SQL(", ").join(
        sql.SQL("pg_catalog.{}({})").format(
            sql.Identifier(signature.split("(")[0]), sql.SQL(signature.split("(")[1][:-1])
        )
        for signature in LOCK_FUNCTIONS
    )


def _executable(conn: Conn, role: str) -> list[str]:
    """The lock functions ``role`` may execute (itself, through its roles or PUBLIC)."""
    rows = conn.execute(
        "SELECT f FROM unnest(%s::text[]) AS f "
        "WHERE has_function_privilege(%s, 'pg_catalog.' || f, 'EXECUTE')",
        (list(LOCK_FUNCTIONS), role),
    ).fetchall()
    return [str(r[0]) for r in rows]


def _public_executes(conn: Conn) -> bool:
    """Whether ``PUBLIC`` may still execute some lock function."""
    row = conn.execute(
        "SELECT bool_or(p.proacl IS NULL OR EXISTS ("
        "  SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0 AND a.privilege_type = "
        "  'EXECUTE')) "
        "FROM pg_proc p WHERE p.oid = ANY(%s::regprocedure[])",
        ([f"pg_catalog.{f}" for f in LOCK_FUNCTIONS],),
    ).fetchone()
    return bool(row and row[0])


@translated
def grant_reader(conn: Conn, role: str) -> None:
    """Grant ``role`` (an existing role) read-only access to riido's snapshots, and keep
    it (and every role that does not write riido) from taking riido-pg's locks (the
    module docstring)."""
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if exists is None:
        raise InvalidInput(
            f"no role {role!r}",
            Hint.same(f"create it first, e.g. CREATE ROLE {sql_ident(role)} LOGIN"),
        )
    writes = conn.execute(
        "SELECT has_schema_privilege(%(r)s, 'riido', 'CREATE') "
        "OR has_table_privilege(%(r)s, 'riido.snapshots', 'INSERT')",
        {"r": role},
    ).fetchone()
    if writes and writes[0]:
        raise InvalidInput(
            f"role {role!r} writes riido (itself or through a role it belongs to); a reader "
            "must not",
            Hint.same("choose a role that writes nothing, or revoke its write privileges first"),
        )
    statements = sql.SQL(sql_template("grant_reader")).format(role=sql.Identifier(role))
    with conn.transaction():
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        superuser = bool((row.fetchone() or (False,))[0])
        if _public_executes(conn):
            if not superuser:
                raise PermissionDenied(
                    f"cannot keep role {role!r} from riido-pg's locks: every role may take "
                    "advisory locks here, and only a superuser may revoke that from PUBLIC; "
                    "nothing was granted",
                    Hint.same(
                        f"run `{shell_command('riido-pg', 'db', 'grant-reader', role)}` as a "
                        "superuser"
                    ),
                )
            conn.execute(sql.SQL("REVOKE EXECUTE ON FUNCTION {} FROM PUBLIC").format(_functions()))
        writers = [str(r[0]) for r in conn.execute(_WRITERS, {"reader": role}).fetchall()]
        if writers and superuser:
            conn.execute(
                sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(
                    _functions(), sql.SQL(", ").join(map(sql.Identifier, writers))
                )
            )
        conn.execute(statements)
        left = _executable(conn, role)
        if left:
            raise PermissionDenied(
                f"role {role!r} may still take advisory locks (it may execute {left[0]}, "
                "granted to it or to a role it belongs to); nothing was granted",
                Hint.same("revoke that first, or choose another role"),
            )
