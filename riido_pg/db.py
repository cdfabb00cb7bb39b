"""Public façade: ``riido_pg.db.connect`` opens the chosen server (see
:mod:`riido_pg.server.connect`); :func:`redact_dsn` masks the passwords in a text about a
connection string; :mod:`riido_pg.config` reads the environment."""

from riido_pg.server.connect import (
    DEFAULT_LOCK_TIMEOUT_MS,
    DEFAULT_STATEMENT_TIMEOUT_MS,
    SCHEMA_REVISION,
    Conn,
    check_schema,
    connect,
    redact_dsn,
    resolve_dsn,
)

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
    "SCHEMA_REVISION",
    "Conn",
    "check_schema",
    "connect",
    "redact_dsn",
    "resolve_dsn",
]
