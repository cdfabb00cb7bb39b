"""The run's global options (``--dsn``, ``--debug``) and the database they open.

The options are accepted before the subcommand (on the app's callback) and after it
(on each command, :mod:`riido_pg.cli.command`); both land in one :class:`Settings`,
click's context object for the whole run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import typer

from riido_pg.api import Database
from riido_pg.server.connect import Conn

__all__ = ["Settings", "connect", "database", "settings"]


@dataclass
class Settings:
    """The run's global options; ``signal`` is set when SIGTERM asked it to stop."""

    dsn: str | None = None
    debug: bool = False
    signal: int | None = None

    def update(self, dsn: str | None, debug: bool) -> Settings:
        if dsn:
            self.dsn = dsn
        if debug and not self.debug:
            self.debug = True
            logging.disable(logging.NOTSET)
            logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        return self


def settings(ctx: typer.Context, dsn: str | None = None, debug: bool = False) -> Settings:
    """The run's Settings, updated with the options given."""
    obj = ctx.find_object(Settings)
    if obj is None:  # invoked without riido_pg.cli.main (e.g. typer's test runner)
        ctx.obj = obj = Settings()
        ctx.find_root().obj = obj
    return obj.update(dsn, debug)


def database(ctx: typer.Context, *, migrate: bool = True) -> Database:
    """The database the run's options choose (it connects on first use)."""
    return Database.open(settings(ctx).dsn, migrate=migrate)


def connect(ctx: typer.Context, *, migrate: bool = True) -> Conn:
    """A psycopg connection to the server the run's options choose."""
    from riido_pg.db import connect as open_connection

    return open_connection(settings(ctx).dsn, migrate=migrate)
