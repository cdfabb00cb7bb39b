"""riido-pg's home directory (``$RIIDO_PG_HOME``): the data directory, the start lock,
the marker of a cluster that has started, and the socket directory.

Starts and stops hold an exclusive ``flock`` on ``$RIIDO_PG_HOME/pgdata.lock`` (a
bounded wait), so concurrent commands never run initdb or pg_ctl on the same directory
at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from riido_pg import config
from riido_pg.errors import DatabaseUnavailable, OutputError
from riido_pg.files import write_output
from riido_pg.server.embedded.account import server_account, user_name
from riido_pg.server.embedded.messages import fs_error, reason
from riido_pg.server.embedded.probe import PG_PORT

__all__ = [
    "LOCK_NAME",
    "LOCK_WAIT_S",
    "MARKER_NAME",
    "home_dir",
    "lock",
    "make_home",
    "socket_dir",
    "write_marker",
]

#: Written to ``$RIIDO_PG_HOME`` once the cluster has started: from then on it may hold
#: data, and riido-pg never removes it.
MARKER_NAME = "pgdata.initialized"
#: ``flock``-ed while starting or stopping the server.
LOCK_NAME = "pgdata.lock"
#: How long a command waits for another one that is starting the server (initdb included).
LOCK_WAIT_S = 120.0


def home_dir() -> Path:
    """Where riido-pg keeps its own files: ``$RIIDO_PG_HOME`` or the user data dir."""
    return config.home()


def make_home(home: Path) -> None:
    try:
        home.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise DatabaseUnavailable(
            f"riido-pg home {home} is not a directory; move it away or set RIIDO_PG_HOME"
        ) from exc
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create riido-pg home {home}: {reason(exc)}; "
            "set RIIDO_PG_HOME to a writable directory"
        ) from exc


@contextlib.contextmanager
def lock(home: Path, *, required: bool) -> Iterator[None]:
    """Hold an exclusive lock on ``home/pgdata.lock`` (bounded wait). Without
    ``required``, a home where the lock cannot even be opened is used unlocked."""
    import fcntl

    path = home / LOCK_NAME
    fd: int | None = None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only home can still be locked for a stop
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        if fd is None and required:
            raise fs_error(home, exc) from exc
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


def socket_dir(pgdata: Path) -> Path:
    """``pgdata`` itself, or a private directory when its path is too long for a socket."""
    limit = 103 if sys.platform == "darwin" else 107
    if len(os.fsencode(pgdata / f".s.PGSQL.{PG_PORT}")) <= limit:
        return pgdata
    base = (config.runtime_dir() or Path("/tmp")) / f"riido-pg-{os.geteuid()}"
    digest = hashlib.sha256(os.fsencode(pgdata)).hexdigest()[:16]
    path = base / digest
    if len(os.fsencode(path / f".s.PGSQL.{PG_PORT}")) > limit:
        raise DatabaseUnavailable(
            f"the path {pgdata} is too long for a unix socket; set RIIDO_PG_HOME to a shorter one"
        )
    account = server_account()
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
        raise fs_error(path, exc) from exc
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o022:
        raise DatabaseUnavailable(
            f"socket directory {path} is not a private directory of {user_name(uid)}; "
            "remove it and run again"
        )
    with contextlib.suppress(OSError):
        os.chmod(path, mode)


def write_marker(marker: Path) -> None:
    try:
        write_output(
            marker,
            "the embedded cluster in pgdata/ has started and may hold data: "
            "riido-pg never removes it\n",
        )
    except OutputError as exc:
        raise DatabaseUnavailable(f"{exc}; check the permissions of {marker.parent}") from exc
