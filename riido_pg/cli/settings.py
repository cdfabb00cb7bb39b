"""The run's global options (``--dsn``, ``--debug``) and the database they open.

The options are accepted before the subcommand (on the app's callback) and after it
(on each command, :mod:`riido_pg.cli.command`); both land in one :class:`Settings`,
click's context object for the whole run.
"""

from __future__ import annotations

import logging
import signal
import threading
from dataclasses import dataclass
from types import FrameType

import typer

from riido_pg.api import Database

__all__ = ["Settings", "database", "settings"]


@dataclass
class Settings:
    """The run's global options; ``signal`` is set when SIGTERM asked it to stop;
    ``finished`` once the command's work is done and kept (:meth:`finish`), ``late``
    when a signal came after that."""

    dsn: str | None = None
    debug: bool = False
    signal: int | None = None
    finished: str | None = None
    late: int | None = None

    def finish(self, what: str) -> None:
        """The command's work is done and kept; ``what`` says so ("snapshot 'x' is
        ready"). A first SIGINT or SIGTERM from here on no longer stops the run: it
        prints what it has to and exits 0, saying the signal came after the work (see
        :func:`riido_pg.cli.main.main`); a second one stops it, with a line saying
        ``what``. Only the main thread gets signals; elsewhere only ``what`` is kept."""
        self.finished = what
        if threading.current_thread() is not threading.main_thread():
            return

        def late(signum: int, frame: FrameType | None) -> None:
            if self.late is None:
                self.late = signum
                return
            self.signal = signum
            raise KeyboardInterrupt

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, late)

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
