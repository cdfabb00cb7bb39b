"""Throw-away PostgreSQL clusters on loopback, for the shard and standby tests and the
shard bench (not a test module): ``initdb`` + ``pg_ctl`` on a free port in a temporary
directory, run as the ``postgres`` user when we are root, removed afterwards. One
``initdb`` a process: later clusters start from a copy of its data directory.

The Debian PostgreSQL 15 binaries are preferred (they ship ``postgres_fdw``), then
whatever ``initdb`` is on PATH; :func:`pg_bin` is None when there is none.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Cluster", "cluster", "pg_bin", "standby_of"]

_DEBIAN = Path("/usr/lib/postgresql/15/bin")


def pg_bin() -> Path | None:
    """The directory holding initdb, pg_ctl and pg_basebackup, or None."""
    if (_DEBIAN / "initdb").exists():
        return _DEBIAN
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


#: pg_ctl waits for the server this long (its default, 60 s, is short on a loaded machine).
_WAIT = ("-w", "-t", "300")


def _run(args: list[str]) -> None:
    subprocess.run(_as_postgres(args), check=True, capture_output=True, timeout=600)


@dataclass
class Cluster:
    bin: Path
    data: Path
    port: int

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def start(self) -> None:
        log = self.data.parent / "log"
        _run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(log), *_WAIT, "start"])

    def stop(self, mode: str = "fast") -> None:
        _run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, *_WAIT, "stop"])


def _configure(data: Path, port: int) -> None:
    with (data / "postgresql.conf").open("a") as conf:
        conf.write(
            f"port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
            "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            "shared_buffers = 64MB\nmax_connections = 40\nwal_level = replica\n"
            "max_wal_senders = 4\nhot_standby = on\n"
        )


@contextmanager
def _workdir() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="riido-pg-cluster-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@functools.cache
def _initialized(binary: Path) -> Path:
    """A data directory fresh from ``initdb`` (trust authentication, replication
    allowed on loopback), never started: made once a process, removed at its exit."""
    root = Path(tempfile.mkdtemp(prefix="riido-pg-initdb-"))
    atexit.register(shutil.rmtree, root, True)
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    _run([str(binary / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-N"])
    with (data / "pg_hba.conf").open("a") as hba:
        hba.write("host replication all 127.0.0.1/32 trust\n")
    return data


@contextmanager
def cluster() -> Iterator[Cluster]:
    """A new cluster (trust authentication on loopback, replication allowed), started."""
    binary = pg_bin()
    assert binary is not None, "no initdb"
    with _workdir() as root:
        data = root / "data"
        # cp -a keeps the owner (postgres when we are root) and the 0700 mode
        subprocess.run(["cp", "-a", str(_initialized(binary)), str(data)], check=True)
        port = _free_port()
        _configure(data, port)
        node = Cluster(binary, data, port)
        node.start()
        try:
            yield node
        finally:
            node.stop("immediate")


@contextmanager
def standby_of(primary: Cluster) -> Iterator[Cluster]:
    """A streaming-replication hot standby of ``primary`` (``pg_basebackup -R``), started."""
    with _workdir() as root:
        data = root / "data"
        _run(
            [
                str(primary.bin / "pg_basebackup"),
                "-D",
                str(data),
                "-h",
                "127.0.0.1",
                "-p",
                str(primary.port),
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
            ]
        )
        port = _free_port()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {port}\n")
        node = Cluster(primary.bin, data, port)
        node.start()
        try:
            yield node
        finally:
            node.stop("immediate")
