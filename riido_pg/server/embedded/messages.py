"""The one-line errors of the embedded server: what failed, its real cause, and a fix
only when the cause is one riido-pg knows.

A PostgreSQL program that fails says so several times: initdb prints the cause, then
``child process exited with exit code 2`` and ``removing contents of data directory``;
pg_ctl prints ``could not start server`` and leaves the cause in the server log.
:func:`cause` picks the first line that reports the problem itself and skips what the
program printed while cleaning up. The whole output goes into the error's notes
(shown with ``--debug``), so nothing is lost by keeping the line short.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import stat
from pathlib import Path

from riido_pg.errors import DatabaseUnavailable
from riido_pg.server.embedded.account import owner

__all__ = ["TRANSIENT", "cause", "failure", "fs_error", "q", "reason"]

#: An old server's shared memory, lock file or socket is still in use.
TRANSIENT = (
    "pre-existing shared memory block",
    "lock file",
    "another postmaster",
    "could not bind",
    "address already in use",
)
#: What a program prints after the failure it already reported: clean-up and consequences.
_AFTERMATH = (
    "removing data directory",
    "removing contents of data directory",
    "failed to remove data directory",
    "failed to remove contents of data directory",
    "not removed at user's request",
    "child process exited with exit code",
    "child process was terminated by signal",
    "could not start server",
    "examine the log output",
    "stopped waiting",
    "database system is shut down",
)
_LEVELS = ("PANIC:", "FATAL:", "ERROR:", "error:")
_SKIPPED = ("DETAIL:", "HINT:", "hint:", "LOG:", "detail:")
_PROBLEM = (
    "cannot",
    "could not",
    "failed",
    "permission denied",
    "no such file",
    "not found",
    "no space left",
    "read-only file system",
    "invalid",
    "killed",
    "terminated",
)
#: ``sh: 1: `` (dash) or ``sh: line 1: `` (bash) before a shell's own error.
_SHELL = re.compile(r"^(?:/bin/)?sh: (?:line )?\d+: ")


def q(path: Path | str) -> str:
    """``path`` quoted for a shell command in a message (or for pg_ctl -o)."""
    return shlex.quote(str(path))


def reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def fs_error(path: Path, exc: OSError) -> DatabaseUnavailable:
    """A file system call on ``path`` failed: the cause, and the fix for the known ones."""
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
            f"permission denied on {path}; make it writable by {owner().name} "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    else:
        message = f"cannot use {path}: {reason(exc)}"
    return DatabaseUnavailable(message)


def _text(line: str) -> str:
    """A line without its log prefix, level, progress label or shell prefix."""
    for level in _LEVELS:
        if level in line:
            line = line.split(level, 1)[1]
            break
    else:
        if " ... " in line:  # initdb's "running bootstrap script ... <what went wrong>"
            line = line.rsplit(" ... ", 1)[1]
    line = " ".join(line.split())
    return _SHELL.sub("", line)


def _aftermath(line: str) -> bool:
    low = line.lower()
    return any(a in low for a in _AFTERMATH)


def cause(output: str) -> str:
    """The first line of a failed PostgreSQL program's output that names its cause:
    the first error (PANIC, FATAL, ERROR, ``error:``), else the first line reporting a
    problem (a shell's ``cannot create ...``), else the last line but clean-up."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    lines = [line for line in lines if not any(s in line for s in _SKIPPED)]
    own = [line for line in lines if not _aftermath(line)]
    for line in own:
        if any(level in line for level in _LEVELS) and _text(line):
            return _text(line)
    for line in own:
        text = _text(line)
        if text.lower() != "ok" and any(p in text.lower() for p in _PROBLEM):
            return text
    for line in reversed(own):
        if _text(line) and _text(line).lower() != "ok":
            return _text(line)
    return _text(lines[-1]) if lines else "no output"


def _dev_null_broken() -> bool:
    try:
        return not stat.S_ISCHR(os.stat(os.devnull).st_mode)
    except OSError:
        return True


def failure(
    home: Path,
    pgdata: Path,
    what: str,
    output: str,
    *,
    problem: str | None = None,
    log: Path | None = None,
) -> DatabaseUnavailable:
    """A failed initdb or start: ``what`` failed, its cause (``problem``, else the first
    line of it in ``output``), and a fix when the cause is known; else where to look
    (``log``). The whole output goes into the error's notes."""
    low = output.lower()
    problem = problem or cause(output)
    if "no space left on device" in low or "disk quota exceeded" in low:
        message = (
            f"{what}: no space left on the device holding {home}; free some space "
            "or set RIIDO_PG_HOME to another disk"
        )
    elif "read-only file system" in low:
        message = (
            f"{what}: {home} is on a read-only file system; make it writable "
            "or set RIIDO_PG_HOME to a writable directory"
        )
    elif _dev_null_broken():
        message = (
            f"{what}: {problem}; {os.devnull} is not the null device (something replaced "
            f"it with a regular file): as root, run `rm -f {os.devnull} && "
            f"mknod -m 666 {os.devnull} c 1 3`"
        )
    elif "permission denied" in problem.lower() and str(home) in problem:
        message = (
            f"{what}: {problem}; run `chown -R {owner().name} {q(pgdata)}` (as root) "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    elif any(t in problem.lower() for t in TRANSIENT):
        message = (
            f"{what}: an old server still holds it ({problem}); stop that server's postgres "
            "processes, then run again"
        )
    elif log is not None:
        message = f"{what}: {problem}; see {log}"
    else:
        message = f"{what}: {problem}"
    error = DatabaseUnavailable(message)
    error.add_note(f"output:\n{output.strip()}")
    return error
