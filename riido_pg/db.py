"""Public façade: ``riido_pg.db.connect`` opens the chosen server (see
:mod:`riido_pg.server.connect`)."""

from riido_pg.server.connect import (
    DEFAULT_LOCK_TIMEOUT_MS,
    DEFAULT_STATEMENT_TIMEOUT_MS,
    SCHEMA_REVISION,
    Conn,
    check_schema,
    connect,
    resolve_dsn,
)

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
    "SCHEMA_REVISION",
    "Conn",
    "check_schema",
    "connect",
    "resolve_dsn",
]
