"""The git binary, run on the one repository a user names.

riido-pg reads a git revision with the ``git`` found on ``PATH`` (the user's own,
so every object format and pack the user's repositories use is read as git reads
it). Every command is read-only, local and non-interactive: fetching is impossible
(``protocol.allow=never``, and ``GIT_NO_LAZY_FETCH`` for partial clones), replace
refs are not applied (``GIT_NO_REPLACE_OBJECTS``), no prompt or pager runs, and the
variables that would point git at another repository (``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_OBJECT_DIRECTORY`` ...) are dropped, so
the repository is the one at the directory given, as ``git -C DIR`` finds it.

A directory names a repository (:func:`open_repository`) when it is the top of a
work tree, a directory inside one (meaning that subtree), a bare repository, or a
work tree's ``.git`` directory. Errors: no ``git`` on ``PATH`` is
:class:`GitNotFound` (exit 1); a directory in no repository
:class:`NotARepository`, a revision naming no commit :class:`UnknownRevision`, a
partial clone (``git clone --filter``: objects it lacks could only be fetched)
:class:`PartialClone`, and any other refusal by git (a repository owned by another
user, a corrupt one) :class:`GitFailed`, each with git's own words (exit 2).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from riido_pg.errors import InvalidInput, RiidoError

__all__ = [
    "GitFailed",
    "GitNotFound",
    "NotARepository",
    "PartialClone",
    "Repository",
    "UnknownRevision",
    "git_command",
    "git_env",
    "open_repository",
]

#: Variables that would make git read another repository than the one at ``-C``.
_REDIRECTS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_REPLACE_REF_BASE",
)


class GitNotFound(RiidoError):
    """No ``git`` executable on ``PATH``."""


class NotARepository(InvalidInput):
    """The directory is not in a git repository (or not one git can use as given)."""


class UnknownRevision(InvalidInput):
    """The revision names no commit of the repository."""


class PartialClone(InvalidInput):
    """A partial clone: reading its history would need objects from its remote."""


class GitFailed(InvalidInput):
    """git refused to read the repository (its message says why)."""


def git_env() -> dict[str, str]:
    """The environment every git command runs in (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTS}
    env.update(
        LC_ALL="C",
        LANGUAGE="C",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_PAGER="cat",
    )
    return env


def git_command(directory: Path | str, *args: str) -> list[str]:
    """The argument list of one git command run at ``directory``."""
    git = shutil.which("git")
    if git is None:
        raise GitNotFound("git is not installed (no git on PATH); install git to read a revision")
    return [git, "-c", "protocol.allow=never", "-C", os.fspath(directory), *args]


def _first_error(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    for line in lines:
        if line.startswith(("fatal: ", "error: ")):
            return line.split(": ", 1)[1]
    return lines[0] if lines else "failed"


@dataclass(frozen=True)
class Repository:
    """A repository as found from a directory (see :func:`open_repository`)."""

    #: The directory given, resolved.
    path: Path
    #: The git directory (a bare repository's own directory).
    git_dir: Path
    #: Where the directory sits in the work tree: ``""`` (its top, or no work
    #: tree) or ``"sub/dir/"``.
    prefix: str
    #: True when the directory is a bare repository or a git directory.
    bare: bool
    #: True for a shallow clone (some commits' parents are missing).
    shallow: bool
    #: The repository's ``info/exclude`` file (it may not exist).
    info_exclude: Path
    #: The repository's ``shallow`` file (the commits whose parents are cut off).
    shallow_file: Path

    @property
    def top(self) -> Path:
        """The work tree's top directory, or the git directory when there is none."""
        if self.bare:
            return self.path
        depth = len(self.prefix.strip("/").split("/")) if self.prefix else 0
        return self.path.parents[depth - 1] if depth else self.path

    def run(self, *args: str, input: bytes | None = None) -> bytes:
        """Run one git command in the repository; its stdout, or GitFailed."""
        proc = subprocess.run(
            git_command(self.path, *args),
            input=input if input is not None else b"",
            capture_output=True,
            env=git_env(),
            check=False,
        )
        if proc.returncode != 0:
            raise GitFailed(f"{self.path}: git {args[0]}: {_first_error(proc.stderr)}")
        return proc.stdout

    def commit(self, rev: str) -> str:
        """The full id of the commit ``rev`` names (a branch, tag, id, ``HEAD~3`` ...)."""
        if not rev or rev.startswith("-") or any(c in rev for c in "\0\n\r"):
            raise UnknownRevision(f"{rev!r} is not a revision")
        proc = subprocess.run(
            git_command(self.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            check=False,
        )
        if proc.returncode != 0:
            raise UnknownRevision(f"{self.path}: no commit named {rev!r}")
        return proc.stdout.decode("ascii").strip()

    def check_complete(self) -> None:
        """Raise PartialClone for a partial clone (its remote has objects it lacks,
        and riido-pg never fetches them)."""
        proc = subprocess.run(
            git_command(
                self.path,
                "config",
                "--get-regexp",
                r"^(remote\..*\.promisor|extensions\.partialclone)$",
            ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=git_env(),
            check=False,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            raise PartialClone(
                f"{self.path}: a partial clone (objects are left on its remote); riido-pg "
                "never fetches: use a full clone"
            )

    def shallow_commits(self) -> frozenset[str]:
        """The commits of a shallow clone whose parents are not in the repository."""
        if not self.shallow:
            return frozenset()
        try:
            text = self.shallow_file.read_text(encoding="ascii")
        except OSError:
            return frozenset()
        return frozenset(line.strip() for line in text.splitlines() if line.strip())


def open_repository(directory: Path) -> Repository:
    """The repository at ``directory`` (see the module docstring), or why not."""
    if not directory.exists():
        raise InvalidInput(f"{directory}: no such directory")
    if not directory.is_dir():
        raise InvalidInput(f"{directory}: not a directory")
    path = directory.resolve()
    args = (
        "rev-parse",
        "--is-bare-repository",
        "--is-inside-git-dir",
        "--is-shallow-repository",
        "--absolute-git-dir",
        "--git-path",
        "info/exclude",
        "--git-path",
        "shallow",
        "--show-prefix",
    )
    proc = subprocess.run(
        git_command(path, *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if proc.returncode != 0:
        message = _first_error(proc.stderr)
        if message.startswith("not a git repository"):
            raise NotARepository(f"{directory}: not a git repository")
        raise GitFailed(f"{directory}: git: {message}")
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    bare, in_git_dir, shallow, git_dir, exclude, shallow_file = lines[:6]
    prefix = lines[6] if len(lines) > 6 else ""
    if in_git_dir == "true" and Path(git_dir) != path:
        raise NotARepository(
            f"{directory}: inside the git directory {git_dir}; give the repository itself"
        )
    return Repository(
        path=path,
        git_dir=Path(git_dir),
        prefix=prefix if in_git_dir != "true" else "",
        bare=bare == "true" or in_git_dir == "true",
        shallow=shallow == "true",
        info_exclude=path / exclude,
        shallow_file=path / shallow_file,
    )
