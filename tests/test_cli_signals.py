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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from support.cli import DEFAULT_TIMEOUT, cli_env, run_cli, spawn
from support.corpus import write_beir
from support.database import Database
from support.sessions import WAIT, table_locked, wait_until

from riido_pg import Document, load_snapshot

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


def wait_blocked(db: Database) -> set[tuple[int, object]]:
    """Until a riido-pg backend waits for the lock in the middle of its work; those
    backends and their statements."""
    return wait_until(lambda: _blocked(db), "the command to reach the locked table")


def interrupt(db: Database, send: Callable[[], None], release: threading.Event) -> None:
    """Interrupt the command blocked on the lock; once the statement it was caught in is
    cancelled, let its clean-up (which may need the locked table, e.g. to remove a
    'loading' row and its content) go through."""
    caught = wait_blocked(db)
    send()
    wait_until(lambda: not caught & _blocked(db), "the interrupted statement to be cancelled")
    release.set()


def wait_gone(db: Database) -> None:
    """Until no riido-pg backend is left (a cancelled statement's backend closes)."""

    def gone() -> bool:
        with db.connect() as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name = 'riido-pg'"
            ).fetchone()
        return bool(row and not row[0])

    wait_until(gone, "the riido-pg backends to close")


#: A command waits for the test's lock as long as the test needs.
LOCK_WAIT = {"RIIDO_PG_LOCK_TIMEOUT_MS": "600000"}


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
        # on the base `sig-base` (the same documents but ten): its difference waits
        "load on a base": (["load", "sig-next", str(src), "--base", "sig-base"], "postings"),
        "query": (["query", stored, "read config"], "postings"),
        "eval": (["eval", "--snapshot", stored], "targets"),
    }


@pytest.fixture(scope="module")
def sig_base(db: Database, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The snapshot ``sig-base``: the load jobs' documents but the last ten."""
    src = tmp_path_factory.mktemp("sigbase") / "base.jsonl"
    src.write_text(
        "".join(json.dumps({"id": f"x{i}", "text": f"alpha {i}"}) + "\n" for i in range(490))
    )
    result = run_cli(["load", "sig-base", str(src)], dsn=db.dsn)
    assert result.code == 0, result.stderr
    return "sig-base"


@pytest.mark.parametrize("stop", sorted(STOPS))
@pytest.mark.parametrize("command", ["load", "load on a base", "query", "eval"])
def test_signal_stops_the_command(
    db: Database, tmp_path: Path, stored: str, sig_base: str, command: str, stop: str
) -> None:
    args, table = _jobs(tmp_path, stored)[command]
    signum, code, line = STOPS[stop]
    expected = run_cli(["query", sig_base, "alpha 7", "--format", "json"], dsn=db.dsn).stdout
    before = db.counts()
    with table_locked(db, table) as release, spawn(args, dsn=db.dsn, env=LOCK_WAIT) as proc:
        interrupt(db, lambda: proc.send_signal(signum), release)
        out, err = proc.communicate(timeout=WAIT)
    assert (proc.returncode, out, err.decode()) == (code, b"", line)
    wait_gone(db)
    assert db.counts() == before  # nothing half stored, not even a 'loading' row
    after = run_cli(["query", sig_base, "alpha 7", "--format", "json"], dsn=db.dsn)
    assert after.stdout == expected  # a base under an interrupted load is whole


@pytest.mark.parametrize("command", ["load", "query", "eval"])
def test_ctrl_c_on_a_terminal(db: Database, tmp_path: Path, stored: str, command: str) -> None:
    """A real ^C: the terminal sends SIGINT to the foreground process group."""
    args, table = _jobs(tmp_path, stored)[command]
    before = db.counts()
    leader, follower = pty.openpty()

    def controlling_terminal() -> None:  # runs in the child, after setsid
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    with (
        table_locked(db, table) as release,
        spawn(
            args,
            dsn=db.dsn,
            env=LOCK_WAIT,
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=controlling_terminal,
        ) as proc,
    ):
        os.close(follower)
        interrupt(db, lambda: os.write(leader, b"\x03") and None, release)
        proc.wait(timeout=WAIT)
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


@pytest.mark.parametrize(
    "module", [b"typer", b"psycopg", b"riido_pg.storage", b"riido_pg.ranking.policies"]
)
def test_sigint_during_start_up(db: Database, module: bytes) -> None:
    """^C while the interpreter is still importing the command line: the same line and
    exit 130, never a traceback. The child reports each import as it finishes
    (PYTHONPROFILEIMPORTTIME), so the signal is sent while the imports go on; ``hints``
    then waits on an open stdin, so a signal that lands after them is a ^C too."""
    with spawn(
        ["hints"], dsn=db.dsn, env={"PYTHONPROFILEIMPORTTIME": "1"}, stdin=subprocess.PIPE
    ) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.rstrip().endswith(b" " + module):
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    lines = [x for x in err.decode().splitlines() if not x.startswith("import time:")]
    assert (proc.returncode, out, lines) == (130, b"", ["error: interrupted"])


def test_the_package_imports_its_names_when_used() -> None:
    """``import riido_pg`` imports none of its modules (that keeps the window above
    short); each public name is still there, the same object as in its module."""
    import importlib
    import subprocess as sp
    import sys

    import riido_pg

    code = "import sys, riido_pg; print(sorted(m for m in sys.modules if m.startswith('riido_pg')))"
    loaded = sp.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout == "['riido_pg']\n"
    for name in riido_pg.__all__:
        value = getattr(riido_pg, name)
        home = riido_pg._HOMES.get(name)
        if home is not None:
            module = importlib.import_module(home)
            assert value is (module if home == f"riido_pg.{name}" else getattr(module, name))
    with pytest.raises(AttributeError):
        riido_pg.nothing_of_that_name  # noqa: B018


@pytest.fixture
def hears_sigint() -> Iterator[None]:
    """This process's SIGINT as a new process's: KeyboardInterrupt (a suite started
    in the background has it ignored)."""
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


def _interrupted_at(monkeypatch: pytest.MonkeyPatch, prefix: str, times: int) -> None:
    """SIGINT ``times`` times just before the command prints a line starting with
    ``prefix``: the moment its work is done."""
    echo = typer.echo

    def interrupting(message: Any = None, *args: Any, **kwargs: Any) -> None:
        if str(message).startswith(prefix):
            for _ in range(times):
                os.kill(os.getpid(), signal.SIGINT)
        echo(message, *args, **kwargs)

    monkeypatch.setattr(typer, "echo", interrupting)


@pytest.mark.usefixtures("hears_sigint")
def test_an_interrupt_after_the_load_is_done_says_so_and_exits_0(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """^C right as `loaded snapshot ...` is printed: the load is done, the run says so
    and exits 0 (it died bare by the signal, or said `error: interrupted`)."""
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "alpha"}) + "\n")
    _interrupted_at(monkeypatch, "loaded snapshot", 1)
    result = run_cli(["load", "late-once", str(src)], dsn=db.dsn)
    assert (result.code, result.stdout, result.stderr) == (
        0,
        "loaded snapshot 'late-once' (1 document)\n",
        "note: interrupted after the work was done; snapshot 'late-once' is ready\n",
    )
    # a second ^C stops the run: exit 130, and the line says the snapshot is ready
    _interrupted_at(monkeypatch, "loaded snapshot", 2)
    again = run_cli(["load", "late-twice", str(src)], dsn=db.dsn)
    assert (again.code, again.stdout, again.stderr) == (
        130,
        "",
        "error: interrupted; snapshot 'late-twice' is ready\n",
    )
    monkeypatch.undo()
    for snapshot in ("late-once", "late-twice"):
        found = run_cli(["query", snapshot, "alpha"], dsn=db.dsn)
        assert json.loads(found.stdout)["candidates"][0]["id"] == "a", found.stderr


#: ``riido-pg ARGS`` in a process that gets SIGINT once main() has returned, before
#: the interpreter exits: the last moment of every run.
_AFTER_MAIN = """\
import os, signal, sys
from riido_pg.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code
os.kill(os.getpid(), signal.SIGINT)
sys.exit(code)
"""


#: command -> (its arguments, exit code, stdout) when it runs to its end.
_LAST_MOMENT = {
    "load": (
        ["load", "sig-after-load", "{src}"],
        0,
        "loaded snapshot 'sig-after-load' (1 document)",
    ),
    "query": (["query", "sig-after", "alpha", "--limit", "1"], 0, '"id": "a"'),
    "list": (["snapshots", "list", "--format", "json"], 0, '"sig-after"'),
    "drop": (["snapshots", "drop", "sig-after-drop"], 0, "dropped snapshot 'sig-after-drop'\n"),
    "error": (["query", "no-such-snapshot", "alpha"], 2, ""),
}


@pytest.mark.parametrize("command", sorted(_LAST_MOMENT))
def test_a_signal_as_the_process_exits_is_no_death_by_signal(
    db: Database, tmp_path: Path, command: str
) -> None:
    """Every command, once its run is over: the process exits with the run's code and
    output, never dies by the signal (exit -2 after `loaded snapshot ...`, without a
    word)."""
    src = tmp_path / "after.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "alpha"}) + "\n")
    with db.connect() as conn:
        load_snapshot(conn, "sig-after", [Document("a", "alpha")])
        load_snapshot(conn, "sig-after-drop", [Document("a", "alpha")])
    run_cli(["snapshots", "drop", "sig-after-load"], dsn=db.dsn)  # absent or not
    args, code, out = _LAST_MOMENT[command]
    proc = subprocess.run(
        [sys.executable, "-c", _AFTER_MAIN, *(a.format(src=src) for a in args)],
        env=cli_env(db.dsn),
        capture_output=True,
        timeout=DEFAULT_TIMEOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        check=False,
    )
    assert proc.returncode == code, proc.stderr
    assert out in proc.stdout.decode() if out else not proc.stdout, proc.stdout
    assert proc.stderr.decode().startswith("error: ") if code else not proc.stderr
