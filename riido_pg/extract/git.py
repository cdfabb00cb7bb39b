"""The git binary, run on the one repository a user names.

riido-pg reads a git revision with the ``git`` found on ``PATH`` (the user's own,
so every object format and pack the user's repositories use is read as git reads
it). Every command is read-only, local and non-interactive: fetching is impossible
(``protocol.allow=never``, and ``GIT_NO_LAZY_FETCH`` for partial clones), replace
refs are not applied (``GIT_NO_REPLACE_OBJECTS``), no prompt or pager runs, and the
variables that would point git at another repository (``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_OBJECT_DIRECTORY`` ...) are dropped, so
the repository is the one at the directory given, as ``git -C DIR`` finds it.

No configuration can make git run a program. A repository received from someone
else keeps its ``.git/config`` (and whatever it includes), and a key there such as
``core.fsmonitor`` runs a command in every git command that reads the index. git has
no switch to leave a repository's own configuration unread (it needs it: object
format, repository format version), so every git command riido-pg runs is built by
:func:`git_command` and :func:`git_env`, the one place that decides how git runs:

* the system and global files are not read (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM``); of the caller's ``GIT_*``
  variables only an allow-list is passed on (:data:`_KEPT`: where git is installed,
  where discovery stops, tracing), so none names an external diff, pager, ssh
  command or configuration of its own (``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_COUNT``);
* every configuration key of git 2.39 that names a program git could start, or a
  place hooks are taken from, is set on the command line (:data:`_OVERRIDES`), the
  scope read last, which wins over the repository's file and its includes; the
  pager is off (``--no-pager``), every protocol is refused whatever
  ``protocol.<name>.allow`` says (``GIT_ALLOW_PROTOCOL`` empty);
* the keys that name a program by a driver name chosen in the repository
  (``filter.<driver>.clean``/``smudge``/``process``, ``diff.<driver>.textconv`` and
  ``.command``, ``merge.<driver>.driver``) cannot be listed ahead; they run only
  when git converts a file between the work tree and the index or diffs with
  drivers, and riido-pg never asks for either: blobs are read as stored
  (``cat-file`` without ``--filters``/``--textconv``), diffs pass ``--no-ext-diff
  --no-textconv``, and the index is never refreshed or written (``core.fsmonitor``
  off, ``GIT_OPTIONAL_LOCKS=0``).

The tests plant each of these keys in a repository, each writing a marker file,
and run every command that runs git (``tests/test_git_config.py``).

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
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

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
    "git_output",
    "open_repository",
    "run_git",
]

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

#: The caller's ``GIT_*`` variables passed on to git (and ``GIT_TRACE*``): none names
#: a program, a configuration or another repository.
_KEPT = frozenset({"GIT_EXEC_PATH", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"})

#: Configuration set on every git command line: each key of git 2.39 that names a
#: program (or where hooks are), set to a value that names none. Empty strings
#: reset lists (``credential.helper``) or leave a command unset.
_OVERRIDES = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", ""),
    ("sequence.editor", ""),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.attributesFile", os.devnull),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("log.showSignature", "false"),
    ("uploadpack.packObjectsHook", ""),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.allow", "never"),
    *((f"protocol.{p}.allow", "never") for p in ("file", "git", "ssh", "http", "https", "ext")),
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
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") or k in _KEPT or k.startswith("GIT_TRACE")
    }
    env.update(
        LC_ALL="C",
        LANGUAGE="C",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_ALLOW_PROTOCOL="",
        GIT_PROTOCOL_FROM_USER="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_PAGER="cat",
    )
    return env


def git_command(directory: Path | str, *args: str) -> list[str]:
    """The argument list of one git command run at ``directory`` (with
    :func:`git_env`: see the module docstring)."""
    git = shutil.which("git")
    if git is None:
        raise GitNotFound("git is not installed (no git on PATH); install git to read a revision")
    overrides = [arg for key, value in _OVERRIDES for arg in ("-c", f"{key}={value}")]
    return [git, "--no-pager", *overrides, "-C", os.fspath(directory), *args]


def run_git(
    directory: Path | str, *args: str, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """One git command at ``directory`` run to its end (:func:`git_command` in
    :func:`git_env`), its output captured."""
    return subprocess.run(
        git_command(directory, *args),
        input=input if input is not None else b"",
        capture_output=True,
        env=git_env(),
        check=False,
    )


@contextmanager
def git_output(directory: Path | str, *args: str) -> Iterator[IO[bytes]]:
    """The stdout of one git command at ``directory``, read as it comes; when the
    block reads it to its end and git failed, GitFailed with git's first line. The
    process is killed if the block leaves early."""
    name = next((a for a in args if not a.startswith("-") and "=" not in a), "git")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            git_command(directory, *args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            env=git_env(),
        )
        assert proc.stdout is not None
        try:
            yield proc.stdout
            if proc.wait() != 0:
                err.seek(0)
                said = err.read().decode("utf-8", "replace").strip().splitlines()
                raise GitFailed(f"{directory}: git {name}: {said[0] if said else 'failed'}")
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()


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
        proc = run_git(self.path, *args, input=input)
        if proc.returncode != 0:
            raise GitFailed(f"{self.path}: git {args[0]}: {_first_error(proc.stderr)}")
        return proc.stdout

    def commit(self, rev: str) -> str:
        """The full id of the commit ``rev`` names (a branch, tag, id, ``HEAD~3`` ...)."""
        if not rev or rev.startswith("-") or any(c in rev for c in "\0\n\r"):
            raise UnknownRevision(f"{rev!r} is not a revision")
        proc = run_git(self.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        oid = proc.stdout.decode("ascii", "replace").strip()
        # rev-parse also answers ``^NAME`` (an exclusion, "^<id>"): only an id will do
        if proc.returncode != 0 or not _OID.fullmatch(oid):
            raise UnknownRevision(f"{self.path}: no commit named {rev!r}")
        return oid

    def check_complete(self) -> None:
        """Raise PartialClone for a partial clone (its remote has objects it lacks,
        and riido-pg never fetches them)."""
        promisor = r"^(remote\..*\.promisor|extensions\.partialclone)$"
        proc = run_git(self.path, "config", "--get-regexp", promisor)
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
    )
    proc = run_git(path, *args)
    if proc.returncode != 0:
        message = _first_error(proc.stderr)
        if message.startswith("not a git repository"):
            raise NotARepository(f"{directory}: not a git repository")
        raise GitFailed(f"{directory}: git: {message}")
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) != 7:  # six lines, each ending in a newline
        raise GitFailed(f"{directory}: a git directory whose path holds a newline is not read")
    bare, in_git_dir, shallow, git_dir, exclude, shallow_file = lines[:6]
    # the prefix is a path of the work tree, which may hold newlines: asked alone, it
    # is everything up to git's final newline
    prefix = ""
    if in_git_dir != "true" and bare != "true":
        out = run_git(path, "rev-parse", "--show-prefix")
        if out.returncode != 0:
            raise GitFailed(f"{directory}: git: {_first_error(out.stderr)}")
        prefix = out.stdout.decode("utf-8", "surrogateescape").removesuffix("\n")
    if in_git_dir == "true" and Path(git_dir) != path:
        raise NotARepository(
            f"{directory}: inside the git directory {git_dir}; give the repository itself"
        )
    return Repository(
        path=path,
        git_dir=Path(git_dir),
        prefix=prefix,
        bare=bare == "true" or in_git_dir == "true",
        shallow=shallow == "true",
        info_exclude=path / exclude,
        shallow_file=path / shallow_file,
    )
