"""Listing the files under the root, in a fixed order, without leaving it.

Symbolic links are never followed, to files or to directories, inside the
root or out of it: they are counted in ``skipped_symlinks`` and their targets
are read only when the walk reaches them by their real path. That keeps the
walk inside the root and makes symlink loops impossible. (The root itself may
be a symlink to a directory; it is resolved once.) Directories that cannot be
listed are counted in ``dirs_unreadable`` and skipped; the root itself must be
listable.

The files are returned sorted by relative path, compared as UTF-8 bytes
(``a-b.py`` before ``a/b.py`` before ``a_b.py``), whatever order the file
system lists them in.

The walk reads its tree through :class:`Tree`: :class:`DiskTree` is a directory,
and :mod:`riido_pg.extract.gittree` a git revision, walked by the same rules (a
symlink blob is a symlink, a submodule is skipped and counted in
``skipped_submodules``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from riido_pg.errors import InvalidInput
from riido_pg.extract.ignore import (
    GIT_INFO_EXCLUDE,
    IGNORE_FILES,
    VCS_DIRS,
    IgnoreRules,
    IgnoreSpec,
    compile_lines,
    ignore_file_lines,
    is_vendored,
)
from riido_pg.extract.languages import language_of
from riido_pg.extract.paths import TEST_DIRS, is_test_file_name
from riido_pg.extract.reading import Skipped, read_source
from riido_pg.extract.stats import ExtractStats

__all__ = [
    "MAX_IGNORE_FILE_BYTES",
    "DiskTree",
    "Entry",
    "Item",
    "Kind",
    "PathFinder",
    "Tree",
    "read_ignore_file",
    "walk",
]

#: Larger ignore files are not read (and reported as a problem).
MAX_IGNORE_FILE_BYTES = 1_000_000
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)

Kind = Literal["file", "dir", "link", "submodule"]


@dataclass(frozen=True, slots=True)
class Entry:
    """A file to consider: its path relative to the root (POSIX) and its handle (a
    path on disk, or a git blob id)."""

    rel: str
    path: str


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a directory listing: its name, its kind and its handle."""

    name: str
    kind: Kind
    path: str


class Tree(Protocol):
    """What the walk reads: the root's handle, listings, ignore files and files."""

    @property
    def root(self) -> str:
        """The handle of the root directory (also shown in messages)."""
        ...

    def scan(self, path: str) -> list[Item]:
        """The entries of the directory ``path`` (OSError when it cannot be listed)."""
        ...

    def ignore_lines(self, path: str, base: str, stats: ExtractStats) -> list[str]:
        """The lines of the directory's ignore files, in force order (problems in
        ``stats``); ``base`` is its relative path with a ``/``, empty at the root."""
        ...

    def plan(self, paths: Sequence[str]) -> None:
        """The files about to be read, in that order (a reader may fetch them ahead)."""
        ...

    def read(self, path: str, max_bytes: int) -> bytes | Skipped:
        """A file's source (``riido_pg.extract.reading`` rules), or why it is skipped."""
        ...

    def content_id(self, path: str) -> str | None:
        """An id of the file's content (a git blob id), or None when the tree has
        none (a directory on disk)."""
        ...


def _sort_key(entry: Entry) -> bytes:
    return entry.rel.encode("utf-8", "surrogateescape")


def read_ignore_file(path: str, rel: str, stats: ExtractStats) -> list[str]:
    """An ignore file's lines (none when it does not exist; problems in ``stats``)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        stats.problem(rel, f"ignore file not read: {_reason(exc)}")
        return []
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_IGNORE_FILE_BYTES + 1)
    except OSError as exc:
        stats.problem(rel, f"ignore file not read: {_reason(exc)}")
        return []
    if len(data) > MAX_IGNORE_FILE_BYTES:
        stats.problem(rel, "ignore file not read: too large")
        return []
    return ignore_file_lines(data)


def _info_exclude(root: str) -> str:
    """The root's repository's ``info/exclude``: under ``.git/``, or, when ``.git`` is
    a file (a linked work tree, a submodule's checkout), in the repository it names
    (its ``gitdir:``, and that one's ``commondir``, as git finds it)."""
    dot_git = os.path.join(root, GIT_INFO_EXCLUDE[0])
    if not os.path.isfile(dot_git) or os.path.islink(dot_git):
        return os.path.join(dot_git, *GIT_INFO_EXCLUDE[1:])
    try:
        with open(dot_git, encoding="utf-8") as fh:
            first = fh.readline(4096).strip()
        git_dir = os.path.join(root, first.removeprefix("gitdir:").strip())
        common = os.path.join(git_dir, "commondir")
        if os.path.isfile(common):
            with open(common, encoding="utf-8") as fh:
                git_dir = os.path.join(git_dir, fh.readline(4096).strip())
    except (OSError, UnicodeDecodeError):
        return dot_git  # not a directory: read as missing
    return os.path.join(git_dir, *GIT_INFO_EXCLUDE[1:])


@dataclass(frozen=True, slots=True)
class DiskTree:
    """A directory on disk; ``root`` is its resolved path."""

    root: str

    def scan(self, path: str) -> list[Item]:
        items: list[Item] = []
        with os.scandir(path) as it:
            for entry in it:
                kind: Kind = "file"
                try:
                    if entry.is_symlink():
                        kind = "link"
                    elif entry.is_dir(follow_symlinks=False):
                        kind = "dir"
                except OSError:
                    pass
                items.append(Item(entry.name, kind, entry.path))
        return items

    def ignore_lines(self, path: str, base: str, stats: ExtractStats) -> list[str]:
        lines: list[str] = []
        if not base:  # the root: its repository's own excludes come first, so they lose
            lines += read_ignore_file(_info_exclude(path), "/".join(GIT_INFO_EXCLUDE), stats)
        for name in IGNORE_FILES:
            lines += read_ignore_file(os.path.join(path, name), base + name, stats)
        return lines

    def plan(self, paths: Sequence[str]) -> None:
        pass

    def read(self, path: str, max_bytes: int) -> bytes | Skipped:
        return read_source(path, max_bytes)

    def content_id(self, path: str) -> str | None:
        return None


def _directory_spec(tree: Tree, path: str, base: str, stats: ExtractStats) -> IgnoreSpec | None:
    return _compile(tree.ignore_lines(path, base, stats), base, stats)


def _compile(lines: Sequence[str], base: str, stats: ExtractStats) -> IgnoreSpec | None:
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    spec, bad = compile_lines(lines)
    for line in bad:
        stats.problem(base or ".", f"invalid ignore pattern {line!r}")
    return spec


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "vanished"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or type(exc).__name__).lower()


def _is_test_entry(name: str, is_dir: bool) -> bool:
    return name in TEST_DIRS if is_dir else is_test_file_name(name)


Verdict = Literal[
    "vcs", "excluded", "ignored", "vendored", "link", "tests", "submodule", "dir", "file"
]


def _verdict(
    rel: str,
    item: Item,
    excludes: IgnoreSpec | None,
    rules: IgnoreRules,
    include_vendored: bool,
    no_tests: bool,
) -> Verdict:
    """What the walk does with one entry (the same decision for every kind of tree)."""
    is_dir = item.kind in ("dir", "submodule")
    if item.name in VCS_DIRS and (is_dir or item.name == GIT_INFO_EXCLUDE[0]):
        return "vcs"  # a ".git" file too: a linked work tree's or a submodule's
    if excludes is not None and excludes.matches(rel, is_dir):
        return "excluded"
    if rules.ignored(rel, is_dir):
        return "ignored"
    if not include_vendored and is_vendored(item.name, is_dir):
        return "vendored"
    if item.kind == "link":
        return "link"
    if no_tests and _is_test_entry(item.name, is_dir):
        return "tests"
    return item.kind


def walk(
    tree: Tree,
    *,
    excludes: IgnoreSpec | None,
    include_vendored: bool,
    stats: ExtractStats,
    no_tests: bool = False,
    languages: frozenset[str] = frozenset(),
) -> list[Entry]:
    """Every non-directory entry to consider, sorted; pruned entries are counted.

    ``no_tests`` leaves out test directories and files (``riido_pg.extract.paths``);
    ``languages`` are the selected ones, to count how many left-out files held code.
    """
    found: list[Entry] = []
    stack: list[tuple[str, str, IgnoreRules]] = [(tree.root, "", IgnoreRules())]
    while stack:
        path, base, inherited = stack.pop()
        try:
            items = sorted(tree.scan(path), key=lambda e: e.name)
        except OSError as exc:
            if not base:
                raise InvalidInput(f"cannot list {tree.root}: {_reason(exc)}") from exc
            stats.dirs_unreadable += 1
            stats.problem(base.rstrip("/"), f"directory not read: {_reason(exc)}")
            continue
        rules = inherited.with_directory(base, _directory_spec(tree, path, base, stats))
        subdirs: list[tuple[str, str, IgnoreRules]] = []
        for item in items:
            rel = base + item.name
            verdict = _verdict(rel, item, excludes, rules, include_vendored, no_tests)
            if verdict in ("excluded", "tests"):
                is_dir = item.kind in ("dir", "submodule")
                left_out = stats.excluded if verdict == "excluded" else stats.tests
                left_out.add(is_dir, not is_dir and language_of(item.name) in languages)
            elif verdict == "ignored":
                stats.skipped_ignored += 1
            elif verdict == "vendored":
                stats.skipped_vendored += 1
            elif verdict == "link":
                stats.skipped_symlinks += 1
            elif verdict == "submodule":
                stats.skipped_submodules += 1
            elif verdict == "dir":
                subdirs.append((item.path, rel + "/", rules))
            elif verdict == "file":
                found.append(Entry(rel, item.path))
        stack.extend(reversed(subdirs))
    found.sort(key=_sort_key)
    return found


@dataclass
class PathFinder:
    """Whether the walk of ``tree`` would reach one path as a file, without walking
    the whole tree: the same rules, applied down that path's directories only.

    ``specs`` caches each directory's ignore spec by its handle (a git tree id is
    its content, so one finder's cache may serve several trees of one repository),
    ``compiled`` each spec by its lines.
    """

    excludes: IgnoreSpec | None
    include_vendored: bool
    no_tests: bool = False
    specs: dict[tuple[str, bool], IgnoreSpec | None] = field(default_factory=dict)
    compiled: dict[tuple[str, ...], IgnoreSpec | None] = field(default_factory=dict)

    def find(self, tree: Tree, rel: str) -> Entry | None:
        """The walk's entry for ``rel``, or None when the walk would not list it."""
        path, base, rules = tree.root, "", IgnoreRules()
        parts = rel.split("/")
        for i, name in enumerate(parts):
            key = (path, not base)
            if key not in self.specs:
                lines = tuple(tree.ignore_lines(path, base, ExtractStats()))
                if lines not in self.compiled:
                    self.compiled[lines] = _compile(lines, base, ExtractStats())
                self.specs[key] = self.compiled[lines]
            rules = rules.with_directory(base, self.specs[key])
            try:
                item = next((it for it in tree.scan(path) if it.name == name), None)
            except OSError:
                return None
            if item is None:
                return None
            verdict = _verdict(
                base + name, item, self.excludes, rules, self.include_vendored, self.no_tests
            )
            if i == len(parts) - 1:
                return Entry(rel, item.path) if verdict == "file" else None
            if verdict != "dir":
                return None
            path, base = item.path, base + name + "/"
        return None
