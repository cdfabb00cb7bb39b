"""The embedded default (README): no DSN, a fresh RIIDO_PG_HOME, the main-job example
works, the server listens on a Unix socket only, and `db stop` stops it (and says that
it stops only it); a failed PostgreSQL program is reported by its real cause."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from support.cli import EXAMPLE
from support.cli import run_cli_process as run_cli  # the embedded server: real processes

from riido_pg.server.embedded.messages import cause


@pytest.mark.slow
def test_example_on_a_fresh_embedded_home() -> None:
    # not under pytest's basetemp: another pytest session starting meanwhile resets
    # /tmp/pytest-of-root to 0700, locking out the server's user (embedded_postgres)
    scratch = Path(tempfile.mkdtemp(prefix="riido-embedded-")).resolve()
    home = scratch / "home"
    env = {"RIIDO_PG_HOME": str(home)}
    try:
        first = run_cli(["hints", "--identifier-hints"], dsn=None, input=EXAMPLE, env=env)
        assert first.code == 0, first.stderr
        assert [c["id"] for c in json.loads(first.stdout)["candidates"]] == ["a", "c", "b"]
        plain = run_cli(["hints"], dsn=None, input=EXAMPLE, env=env)
        assert [c["id"] for c in json.loads(plain.stdout)["candidates"]] == ["a", "b", "c"]
        pgdata = home / "pgdata"
        assert (pgdata / "PG_VERSION").is_file()
        conf = (pgdata / "postmaster.pid").read_text().splitlines()
        # line 6 of postmaster.pid: listen addresses; empty means no TCP socket
        assert conf[5].strip() == ""
        assert run_cli(["db", "current"], dsn=None, env=env).stdout.strip() != "base"
    finally:
        # RIIDO_PG_DSN names another server: db stop still stops the embedded one, and says so
        stopped = run_cli(["db", "stop"], dsn="postgresql://elsewhere.invalid/db", env=env)
    assert (stopped.code, stopped.stderr) == (0, "")
    assert stopped.stdout == (
        f"stopped the embedded server at {home} "
        "(RIIDO_PG_DSN names another server, which is not affected)\n"
    )
    assert not (home / "pgdata" / "postmaster.pid").exists()
    shutil.rmtree(scratch, ignore_errors=True)


def test_unusable_home_is_an_environment_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = run_cli(
        ["hints"], dsn=None, input=EXAMPLE, env={"RIIDO_PG_HOME": str(blocker / "home")}
    )
    assert result.code == 1
    assert result.stderr.startswith("error: cannot create riido-pg home ")
    assert "set RIIDO_PG_HOME" in result.stderr
    assert os.path.exists(blocker)


# --- db stop names what it stops, and stops nothing else -----------------------------------


def test_stop_says_which_server(tmp_path: Path) -> None:
    home = tmp_path / "home\x1b[2J"  # shown, never sent to the terminal
    shown = f"{tmp_path}/home\\x1b[2J"
    env = {"RIIDO_PG_HOME": str(home)}
    plain = run_cli(["db", "stop", "--debug"], dsn=None, env=env)
    assert (plain.code, plain.stdout, plain.stderr) == (
        0,
        f"the embedded server at {shown} is not running\n",
        "",
    )
    other = run_cli(["db", "stop"], dsn="postgresql://elsewhere.invalid/db", env=env)
    assert (other.code, other.stdout) == (
        0,
        f"the embedded server at {shown} is not running "
        "(RIIDO_PG_DSN names another server, which is not affected)\n",
    )
    assert not home.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--dsn", "postgresql://elsewhere.invalid/db", "db", "stop"],
        ["db", "stop", "--dsn", "postgresql://elsewhere.invalid/db"],
    ],
)
def test_stop_refuses_a_dsn(tmp_path: Path, args: list[str]) -> None:
    result = run_cli(args, dsn=None, env={"RIIDO_PG_HOME": str(tmp_path / "home")})
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "error: db stop stops only the embedded server, never the one --dsn names; "
        "run it without --dsn (and stop that server with its own tools)\n"
    )


# --- the cause of a failed PostgreSQL program -----------------------------------------------

#: initdb as embedded_postgres while /dev/null was a regular file of root's (abridged).
INITDB_DEV_NULL = """\
The files belonging to this database system will be owned by user "embedded_postgres".
This user must also own the server process.

fixing permissions on existing directory /h/pgdata.initdb-7 ... ok
creating subdirectories ... ok
selecting dynamic shared memory implementation ... posix
sh: 1: cannot create /dev/null: Permission denied
sh: 1: cannot create /dev/null: Permission denied
selecting default "max_connections" ... sh: 1: cannot create /dev/null: Permission denied
100
selecting default "shared_buffers" ... 128MB
selecting default time zone ... Etc/UTC
creating configuration files ... ok
running bootstrap script ... ok
performing post-bootstrap initialization ... sh: 1: cannot create /dev/null: Permission denied
child process exited with exit code 2
initdb: removing contents of data directory "/h/pgdata.initdb-7"
"""
#: initdb with 24 open files allowed.
INITDB_DESCRIPTORS = """\
creating configuration files ... ok
running bootstrap script ... 2026-12-02 14:28:58.931 UTC [19137] FATAL:  insufficient \
file descriptors available to start server process
2026-12-02 14:28:58.931 UTC [19137] DETAIL:  System allows 24, server needs at least 58.
child process exited with exit code 1
initdb: removing data directory "/tmp/idbt/d"
"""
#: pg_ctl start, then the server log: two errors, the first is the cause.
START_LOCKED = """\
2026-12-02 14:30:00.000 UTC [1] LOG:  starting PostgreSQL 18.6 on x86_64-pc-linux-gnu
2026-12-02 14:30:00.001 UTC [1] FATAL:  could not create lock file "/s/.s.PGSQL.5432.lock": \
Permission denied
2026-12-02 14:30:00.002 UTC [1] FATAL:  could not create any Unix-domain sockets
2026-12-02 14:30:00.003 UTC [1] LOG:  database system is shut down
waiting for server to start.... stopped waiting
pg_ctl: could not start server
Examine the log output.
"""


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (INITDB_DEV_NULL, "cannot create /dev/null: Permission denied"),
        (INITDB_DESCRIPTORS, "insufficient file descriptors available to start server process"),
        (
            "initdb: error: invalid locale settings; check LANG and LC_* environment variables\n",
            "invalid locale settings; check LANG and LC_* environment variables",
        ),
        (START_LOCKED, 'could not create lock file "/s/.s.PGSQL.5432.lock": Permission denied'),
        ("pg_ctl: server does not shut down\n", "pg_ctl: server does not shut down"),
        ("child process exited with exit code 1\n", "child process exited with exit code 1"),
        ("", "no output"),
    ],
)
def test_cause_is_the_first_line_of_the_real_problem(output: str, expected: str) -> None:
    assert cause(output) == expected
