"""Throw-away databases on a server, for the tests (``conftest.py``) and the
benchmarks (``bench/common.py``) alike: one implementation of creating, migrating and
dropping them."""

from __future__ import annotations

import uuid

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from riido_pg.server import migrate

__all__ = ["create_database", "drop_database"]


def create_database(server_dsn: str, prefix: str, *, migrated: bool = True) -> tuple[str, str]:
    """Create ``<prefix>_<8 hex>`` (migrated to head unless told not to); return its
    name and DSN."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(server_dsn, dbname=name)
    if migrated:
        migrate.upgrade(dsn)
    return name, dsn


def drop_database(server_dsn: str, name: str) -> None:
    """Drop the database, ending the sessions still connected to it."""
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
