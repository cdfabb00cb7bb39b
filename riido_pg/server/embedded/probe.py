"""Is a server running in a data directory? ``postmaster.pid`` and ``/proc``, no subprocess.

A pid file is trusted only when its pid is a live (not zombie) ``postgres`` process
working in our data directory: a killed server leaves a pid that may now be dead, a
zombie no one reaped, or another program. Files that name no such process are stale
and removed; processes of a killed server still working in the directory are waited
for (bounded), then named with the command that stops them.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riido_pg.errors import DatabaseUnavailable
from riido_pg.server.embedded.messages import fs_error

__all__ = [
    "LEFTOVER_WAIT_S",
    "PG_PORT",
    "PidFile",
    "clear_stale",
    "is_server_process",
    "read_pidfile",
    "running",
    "server_processes",
    "wait_for_leftovers",
]

PG_PORT = 5432
#: How long processes left by a killed server may keep running in the data directory.
LEFTOVER_WAIT_S = 10.0

_LINUX = sys.platform.startswith("linux")


@dataclass(frozen=True)
class PidFile:
    """The lines of ``postmaster.pid`` riido-pg uses."""

    pid: int
    port: int
    socket_dir: str
    status: str

    def uri(self) -> str:
        from urllib.parse import quote

        host = quote(self.socket_dir, safe="/")
        return f"postgresql://postgres@/postgres?host={host}&port={self.port}"


def read_pidfile(path: Path) -> PidFile | None:
    """``None`` when there is no file; pid 0 when it cannot be parsed."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return None
    except OSError:
        return PidFile(0, PG_PORT, "", "")

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
    return PidFile(pid, port, line(4), line(7))


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


def _psutil() -> Any:
    return importlib.import_module("psutil")


def is_server_process(pid: int, pgdata: Path) -> bool:
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


def running(pgdata: Path) -> PidFile | None:
    """The pid file of the live server of ``pgdata``, or ``None``."""
    info = read_pidfile(pgdata / "postmaster.pid")
    if info is None or not is_server_process(info.pid, pgdata):
        return None
    return info


def server_processes(pgdata: Path) -> list[int]:
    """Live postgres processes working in ``pgdata`` (e.g. children of a killed server)."""
    found: list[int] = []
    if _LINUX:
        with os.scandir("/proc") as entries:
            for entry in entries:
                if entry.name.isdigit() and is_server_process(int(entry.name), pgdata):
                    found.append(int(entry.name))
        return sorted(found)
    psutil: Any = _psutil()
    for proc in psutil.process_iter(["pid"]):
        if is_server_process(int(proc.info["pid"]), pgdata):
            found.append(int(proc.info["pid"]))
    return sorted(found)


def wait_for_leftovers(pgdata: Path) -> None:
    """Wait (bounded) until no process of an old server works in ``pgdata``."""
    deadline = time.monotonic() + LEFTOVER_WAIT_S
    while pids := server_processes(pgdata):
        if time.monotonic() >= deadline:
            listed = " ".join(str(p) for p in pids)
            raise DatabaseUnavailable(
                f"processes of an old embedded server still run in {pgdata} (pids {listed}); "
                f"stop them with `kill {listed}` and run again"
            )
        time.sleep(0.1)


def clear_stale(pgdata: Path, socket_dir: Path | None) -> None:
    """Remove pid and socket lock files that name no live server of ``pgdata``."""
    pidfile = pgdata / "postmaster.pid"
    info = read_pidfile(pidfile)
    dirs = {pgdata}
    if socket_dir is not None:
        dirs.add(socket_dir)
    if info is not None:
        if info.socket_dir.startswith("/"):
            dirs.add(Path(info.socket_dir))
        if not is_server_process(info.pid, pgdata):
            _unlink(pidfile)
    for directory in dirs:
        lock = directory / f".s.PGSQL.{PG_PORT}.lock"
        held = read_pidfile(lock)
        if held is not None and not is_server_process(held.pid, pgdata):
            _unlink(lock)


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise fs_error(path, exc) from exc
