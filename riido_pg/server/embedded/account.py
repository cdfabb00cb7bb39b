"""Who runs the embedded server: the current user, or as root the system user
``embedded_postgres`` (created on first use), and who must own the data directory."""

from __future__ import annotations

import os
from dataclasses import dataclass

from riido_pg.errors import DatabaseUnavailable

__all__ = ["SERVER_USER", "Account", "owner", "server_account", "user_name"]

#: The system user the server runs as when riido-pg runs as root.
SERVER_USER = "embedded_postgres"


@dataclass(frozen=True)
class Account:
    uid: int
    gid: int
    name: str


def server_account() -> Account | None:
    """The system user the server runs as when we are root (created if missing)."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(SERVER_USER)
    except KeyError:
        _create_user()
        try:
            entry = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise _cannot_create("useradd reported success, but the user does not exist") from None
    return Account(entry.pw_uid, entry.pw_gid, SERVER_USER)


def _create_user() -> None:
    import subprocess

    try:
        done = subprocess.run(
            ["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", SERVER_USER],
            check=False,
            capture_output=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        raise _cannot_create("useradd did not finish within 60 s") from None
    except OSError as exc:
        raise _cannot_create(f"cannot run useradd: {(exc.strerror or str(exc)).lower()}") from exc
    if done.returncode != 0:
        output = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
        reason = (output.splitlines() or [f"useradd exited with code {done.returncode}"])[0]
        raise _cannot_create(reason)


def _cannot_create(reason: str) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        f"cannot create the system user {SERVER_USER} that runs the embedded server as root: "
        f"{reason}; create it (`useradd --system {SERVER_USER}`) or run riido-pg as a "
        "normal user"
    )


def owner() -> Account:
    """Who must own the data directory."""
    account = server_account()
    if account is not None:
        return account
    uid = os.geteuid()
    return Account(uid, os.getegid(), user_name(uid))


def user_name(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
