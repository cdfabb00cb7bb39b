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
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

from riido_pg.errors import InvalidInput
from riido_pg.extract.ignore import (
    GIT_INFO_EXCLUDE,
    IGNORE_FILES,
    VCS_DIRS,
    IgnoreRules,
    compile_lines,
    is_vendored,
)
from riido_pg.extract.languages import language_of
from riido_pg.extract.paths import TEST_DIRS, is_test_file_name
from riido_pg.extract.stats import ExtractStats

__all__ = ["MAX_IGNORE_FILE_BYTES", "Entry", "walk"]

#: Larger ignore files are not read (and reported as a problem).
MAX_IGNORE_FILE_BYTES = 1_000_000
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True, slots=True)
class Entry:
    """A file to consider: its path relative to the root (POSIX) and on disk."""

    rel: str
    path: str


def _sort_key(entry: Entry) -> bytes:
    return entry.rel.encode("utf-8", "surrogateescape")


def _read_ignore_file(path: str, rel: str, stats: ExtractStats) -> list[str]:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
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
    return data.decode("utf-8", "replace").splitlines()


def _directory_spec(path: str, base: str, stats: ExtractStats) -> GitIgnoreSpec | None:
    lines: list[str] = []
    if not base:  # the root: its repository's own excludes come first, so they lose
        lines += _read_ignore_file(
            os.path.join(path, *GIT_INFO_EXCLUDE), "/".join(GIT_INFO_EXCLUDE), stats
        )
    for name in IGNORE_FILES:
        lines += _read_ignore_file(os.path.join(path, name), base + name, stats)
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


def walk(
    root: str,
    *,
    excludes: GitIgnoreSpec | None,
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
    stack: list[tuple[str, str, IgnoreRules]] = [(root, "", IgnoreRules())]
    while stack:
        path, base, inherited = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if not base:
                raise InvalidInput(f"cannot list {root}: {_reason(exc)}") from exc
            stats.dirs_unreadable += 1
            stats.problem(base.rstrip("/"), f"directory not read: {_reason(exc)}")
            continue
        rules = inherited.with_directory(base, _directory_spec(path, base, stats))
        subdirs: list[tuple[str, str, IgnoreRules]] = []
        for entry in entries:
            rel = base + entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                is_link = is_dir = False
            if is_dir and entry.name in VCS_DIRS:
                continue
            if excludes is not None and excludes.check_file(rel + ("/" if is_dir else "")).include:
                stats.excluded.add(is_dir, not is_dir and language_of(entry.name) in languages)
            elif rules.ignored(rel, is_dir):
                stats.skipped_ignored += 1
            elif not include_vendored and is_vendored(entry.name, is_dir):
                stats.skipped_vendored += 1
            elif is_link:
                stats.skipped_symlinks += 1
            elif no_tests and _is_test_entry(entry.name, is_dir):
                stats.tests.add(is_dir, not is_dir and language_of(entry.name) in languages)
            elif is_dir:
                subdirs.append((entry.path, rel + "/", rules))
            else:
                found.append(Entry(rel, entry.path))
        stack.extend(reversed(subdirs))
    found.sort(key=_sort_key)
    return found
