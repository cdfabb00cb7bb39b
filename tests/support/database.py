"""Throw-away databases on a server, for the tests (``conftest.py``) and the
benchmarks (``bench/common.py``) alike: one implementation of creating, migrating,
cloning and dropping them.

A test session migrates one template (:func:`create_template`) and gives each test
module a copy of it (``CREATE DATABASE ... TEMPLATE``), which is much cheaper than
running the migrations again.
"""

from __future__ import annotations

import ipaddress
import socket
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from riido_pg.server import migrate
from riido_pg.server.schema import SCHEMA, metadata

__all__ = [
    "RIIDO_TABLES",
    "Database",
    "Question",
    "another_name",
    "create_database",
    "create_template",
    "drop_database",
    "stored_questions",
]


@dataclass(frozen=True)
class Question:
    """A stored question: its text and its targets' document ids."""

    text: str
    targets: set[str]


#: Every table of the riido schema but alembic's, from the schema's own metadata (so a
#: table a later migration adds is counted too).
RIIDO_TABLES: tuple[str, ...] = tuple(
    sorted(
        table.name
        for table in metadata.sorted_tables
        if table.schema == SCHEMA and table.name != "alembic_version"
    )
)


@dataclass(frozen=True)
class Database:
    dsn: str
    name: str

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        return psycopg.connect(self.dsn, autocommit=True, **kwargs)

    def counts(self) -> dict[str, int]:
        """Row counts of every riido table, to show that a failure stored nothing."""
        with self.connect() as conn:
            return {table: _count(conn, table) for table in RIIDO_TABLES}

    def count(self, table: str) -> int:
        with self.connect() as conn:
            return _count(conn, table)


def _count(conn: psycopg.Connection[Any], table: str) -> int:
    row = conn.execute(
        sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(SCHEMA, table))
    ).fetchone()
    assert row is not None
    return int(row[0])


def create_database(
    server_dsn: str, prefix: str, *, migrated: bool = True, template: str | None = None
) -> Database:
    """Create ``<prefix>_<8 hex>``: a copy of ``template`` when one is given, else a new
    database migrated to head (unless ``migrated`` is false)."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        create += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(create)
    dsn = make_conninfo(server_dsn, dbname=name)
    if migrated and template is None:
        migrate.upgrade(dsn)
    return Database(dsn, name)


def create_template(server_dsn: str) -> str:
    """Create ``riido_template_<8 hex>``, migrated to head and closed to connections (a
    session connected to a template would make copying it fail); return its name."""
    template = create_database(server_dsn, "riido_template")
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(
                sql.Identifier(template.name)
            )
        )
    return template.name


def drop_database(server_dsn: str, name: str) -> None:
    """Drop the database, ending the sessions still connected to it."""
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


def another_name(dsn: str) -> str:
    """``dsn`` written another way that reaches the same server and database: a socket
    directory with ``/.`` appended, a host name as its address, an address under
    another host name (``hostaddr`` keeps the address). Built from ``dsn`` alone, never
    from a fixed host or port, which could reach another server of the machine (one on
    port 5432 beside the embedded server)."""
    params = conninfo_to_dict(dsn)
    host = str(params.get("host") or "")
    assert host and "," not in host, f"a DSN with one host is needed, not {host!r}"
    if host.startswith("/"):
        return make_conninfo(dsn, host=host.rstrip("/") + "/.")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        found.sort(key=lambda info: info[0] != socket.AF_INET)  # 127.0.0.1 before ::1
        return make_conninfo(dsn, host=str(found[0][4][0]))
    return make_conninfo(dsn, host="another-name.invalid", hostaddr=host)


def stored_questions(conn: psycopg.Connection[Any], snapshot_id: str) -> dict[str, Question]:
    """Each question stored for a snapshot (an evaluation corpus): its text and its
    targets' ids, by question id."""
    texts = dict(
        conn.execute(
            "SELECT question_id, text FROM riido.questions WHERE snapshot_id = %s",
            (snapshot_id,),
        ).fetchall()
    )
    targets: dict[str, set[str]] = {}
    for qid, doc_id in conn.execute(
        "SELECT question_id, doc_id FROM riido.targets WHERE snapshot_id = %s", (snapshot_id,)
    ):
        targets.setdefault(qid, set()).add(doc_id)
    return {q: Question(text, targets.get(q, set())) for q, text in texts.items()}
