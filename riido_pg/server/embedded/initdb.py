"""Making ``pgdata`` an initialized data directory the server may start from.

* ``initdb`` runs in ``pgdata.initdb-PID`` and is renamed into place, so an interrupted
  initdb leaves only a staging directory, which the next start removes;
* a data directory without ``PG_VERSION`` or ``global/pg_control`` (left by an older,
  in-place initdb that was killed) is wiped only when the marker ``pgdata.initialized``
  is absent; a directory with the marker may hold data and is never wiped;
* a complete directory of the wrong owner or mode is an error naming the fix.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from riido_pg.errors import DatabaseUnavailable
from riido_pg.server.embedded.account import owner, server_account, user_name
from riido_pg.server.embedded.home import MARKER_NAME
from riido_pg.server.embedded.messages import failure, fs_error, q
from riido_pg.server.embedded.probe import wait_for_leftovers
from riido_pg.server.embedded.programs import grant_server_access, program, run_as_server

__all__ = ["INITDB_TIMEOUT_S", "STAGING_PREFIX", "prepare"]

STAGING_PREFIX = "pgdata.initdb-"
INITDB_TIMEOUT_S = 300


def prepare(home: Path, pgdata: Path) -> None:
    """Make ``pgdata`` an initialized data directory we may start (no server runs)."""
    _remove_staging(home)
    try:
        st = os.stat(pgdata)
    except FileNotFoundError:
        _initdb(home, pgdata)
        return
    except OSError as exc:
        raise fs_error(pgdata, exc) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} is not a directory; "
            "move it away or set RIIDO_PG_HOME"
        )
    account = owner()
    try:
        entries = set(os.listdir(pgdata))
        complete = "PG_VERSION" in entries and (pgdata / "global" / "pg_control").is_file()
    except PermissionError as exc:
        raise DatabaseUnavailable(
            f"cannot read the embedded data directory {pgdata}: permission denied; "
            f"run `chown -R {account.name} {q(pgdata)}` and `chmod 700 {q(pgdata)}` (as root), "
            "or set RIIDO_PG_HOME to a directory of your own"
        ) from exc
    except OSError as exc:
        raise fs_error(pgdata, exc) from exc
    if not complete:
        missing = "PG_VERSION" if "PG_VERSION" not in entries else "global/pg_control"
        if (home / MARKER_NAME).exists():
            raise DatabaseUnavailable(
                f"the embedded data directory {pgdata} is damaged (no {missing}) and may hold "
                f"data, so riido-pg leaves it alone; restore it from a backup, or move it "
                f"away (mv {q(pgdata)} {q(f'{pgdata}.damaged')}) and run again to start empty"
            )
        # what an interrupted in-place initdb leaves: it never held data
        wait_for_leftovers(pgdata)
        _rmtree(pgdata)
        _initdb(home, pgdata)
        return
    if st.st_uid != account.uid:
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} belongs to {user_name(st.st_uid)}, "
            f"not {account.name}; run `chown -R {account.name} {q(pgdata)}` (as root) "
            "or set RIIDO_PG_HOME to a directory of your own"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode not in (0o700, 0o750):
        raise DatabaseUnavailable(
            f"the embedded data directory {pgdata} has mode {mode:03o} and postgresql "
            f"needs 700; run `chmod 700 {q(pgdata)}`"
        )


def _remove_staging(home: Path) -> None:
    try:
        entries = list(home.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(STAGING_PREFIX) and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def _rmtree(path: Path) -> None:
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise fs_error(path, exc) from exc


def _initdb(home: Path, pgdata: Path) -> None:
    """initdb into a staging directory, then rename it to ``pgdata``."""
    staging = home / f"{STAGING_PREFIX}{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    initdb = program("initdb")
    account = server_account()
    try:
        staging.mkdir(mode=0o700)
        if account is not None:
            os.chown(staging, account.uid, account.gid)
    except OSError as exc:
        raise fs_error(home, exc) from exc
    grant_server_access(staging)
    try:
        ran = run_as_server(
            [
                initdb,
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
        if ran.code != 0:
            raise failure(
                home,
                pgdata,
                f"initdb of the embedded server in {home} failed",
                ran.output,
                problem=ran.cause(),
            )
        try:
            os.rename(staging, pgdata)
        except OSError as exc:
            raise fs_error(pgdata, exc) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
