"""SIGINT (a real ^C on a terminal, or kill -INT) and SIGTERM stop any command with
exit 130 / 143 and one `error:` line, and leave nothing half stored.

Each command is caught in the middle of its work: the test holds a lock on the table
the command needs next, waits until the command's backend is waiting for it, then
interrupts. The lock makes the moment deterministic on any machine."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import run_cli
from support.corpus import write_beir
from support.database import Database
from support.sessions import table_locked

STOPS = {
    "sigint": (signal.SIGINT, 130, "error: interrupted\n"),
    "sigterm": (signal.SIGTERM, 143, "error: terminated\n"),
}


def _blocked(db: Database) -> set[tuple[int, object]]:
    """riido-pg backends waiting for a lock: (pid, start of the statement waiting)."""
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'riido-pg' AND wait_event_type = 'Lock'"
        ).fetchall()
    return {(int(r[0]), r[1]) for r in rows}


_caught: set[tuple[int, object]] = set()


def wait_blocked(db: Database) -> None:
    """Until a riido-pg backend waits for the lock in the middle of its work."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if found := _blocked(db):
            _caught.clear()
            _caught.update(found)
            return
        time.sleep(0.05)
    raise AssertionError("the command never reached the locked table")


def interrupt(db: Database, send: Callable[[], None], release: threading.Event) -> None:
    """Interrupt the blocked command; once the statement it was caught in is cancelled,
    let its clean-up (which may need the locked table, e.g. to remove a 'loading' row
    and its content) go through."""
    send()
    deadline = time.monotonic() + 30
    while _caught & _blocked(db) and time.monotonic() < deadline:
        time.sleep(0.05)
    release.set()


def wait_gone(db: Database) -> None:
    """Until no riido-pg backend is left (a cancelled statement's backend closes)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with db.connect() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'riido-pg'"
            ).fetchone()
        if row and not row[0]:
            return
        time.sleep(0.05)
    raise AssertionError("a riido-pg backend stayed")


def _env(db: Database) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    env.update(RIIDO_PG_DSN=db.dsn, RIIDO_PG_LOCK_TIMEOUT_MS="120000")
    return env


def _spawn(args: list[str], db: Database) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "riido_pg", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(db),
    )


@pytest.fixture(scope="module")
def beir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [{"_id": f"d{i}", "text": f"read config {i}"} for i in range(50)]
    queries = [{"_id": "q1", "text": "read config"}]
    return write_beir(tmp_path_factory.mktemp("sig") / "beir", corpus, queries, [("q1", "d3", 1)])


@pytest.fixture(scope="module")
def stored(db: Database, beir: Path) -> str:
    result = run_cli(["eval", str(beir), "--output", "-"], dsn=db.dsn)
    assert result.code == 0, result.stderr
    return str(json.loads(result.stdout)["corpus"]["snapshot_id"])


def _jobs(tmp_path: Path, stored: str) -> dict[str, tuple[list[str], str]]:
    """command -> (arguments, the table to lock so that it stops in the middle)."""
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "".join(json.dumps({"id": f"x{i}", "text": f"alpha {i}"}) + "\n" for i in range(500))
    )
    return {
        # the documents are written, then the postings wait
        "load": (["load", "sig-load", str(src)], "postings"),
        "query": (["query", stored, "read config"], "postings"),
        "eval": (["eval", "--snapshot", stored], "targets"),
    }


@pytest.mark.parametrize("stop", sorted(STOPS))
@pytest.mark.parametrize("command", ["load", "query", "eval"])
def test_signal_stops_the_command(
    db: Database, tmp_path: Path, stored: str, command: str, stop: str
) -> None:
    args, table = _jobs(tmp_path, stored)[command]
    signum, code, line = STOPS[stop]
    before = db.counts()
    with table_locked(db, table) as release:
        proc = _spawn(args, db)
        try:
            wait_blocked(db)
            interrupt(db, lambda: proc.send_signal(signum), release)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert (proc.returncode, out, err.decode()) == (code, b"", line)
    wait_gone(db)
    assert db.counts() == before  # nothing half stored, not even a 'loading' row


@pytest.mark.parametrize("command", ["load", "query", "eval"])
def test_ctrl_c_on_a_terminal(db: Database, tmp_path: Path, stored: str, command: str) -> None:
    """A real ^C: the terminal sends SIGINT to the foreground process group."""
    args, table = _jobs(tmp_path, stored)[command]
    before = db.counts()
    leader, follower = pty.openpty()

    def controlling_terminal() -> None:  # runs in the child, after setsid
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    with table_locked(db, table) as release:
        proc = subprocess.Popen(
            [sys.executable, "-m", "riido_pg", *args],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env=_env(db),
            start_new_session=True,
            preexec_fn=controlling_terminal,
        )
        os.close(follower)
        try:
            wait_blocked(db)
            interrupt(db, lambda: os.write(leader, b"\x03") and None, release)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.returncode == 130
    text = seen.decode("utf-8", "replace").replace("\r\n", "\n")
    assert text.endswith("error: interrupted\n"), text
    assert text.count("error:") == 1 and "Traceback" not in text
    wait_gone(db)
    assert db.counts() == before
