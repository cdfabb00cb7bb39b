"""Which entries of the tree are left out: ignore files, excludes, vendored code.

Ignore files follow git's rules (matched by :mod:`riido_pg.extract.wildmatch`, in
time linear in a path's length whatever the pattern): a
``.gitignore`` or ``.ignore`` in any directory applies to that directory and
below, with patterns relative to it; ``.ignore`` lines come after
``.gitignore`` lines of the same directory and so win; a deeper directory's
files win over a shallower one's; within one file the last matching pattern
wins, and ``!pattern`` re-includes. When the root is a repository's top
directory, its ``.git/info/exclude`` applies too, below every ignore file (as
in git; when ``.git`` is a file, as in a linked work tree, the ``info/exclude`` of
the repository it names). As in git, nothing under an ignored directory can be re-included,
because the directory is never entered. Ignore files outside the root (a
parent repository's, the global excludes file) are not read.

``excludes`` are gitignore-style patterns relative to the root, checked
before the ignore files; a match always excludes.

Vendored or generated code is skipped unless asked for: directories named
``node_modules``, ``vendor``, ``third_party``, ``dist``, ``build``,
``.venv``, ``venv`` or ``__pycache__`` at any depth, and minified scripts
(``*.min.js``, ``*.min.mjs``, ``*.min.cjs``). Version control directories
(``.git``, ``.hg``, ``.svn``) and ``.git`` files are always skipped and not
counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from riido_pg.errors import InvalidInput
from riido_pg.extract.wildmatch import (
    InvalidPattern,
    Pattern,
    compile_pattern,
    trim_trailing_spaces,
)

__all__ = [
    "GIT_INFO_EXCLUDE",
    "IGNORE_FILES",
    "VCS_DIRS",
    "VENDORED_DIRS",
    "IgnoreRules",
    "IgnoreSpec",
    "compile_excludes",
    "compile_lines",
    "ignore_file_lines",
    "is_vendored",
]

IGNORE_FILES = (".gitignore", ".ignore")
#: The repository's own excludes, relative to the root; read only there.
GIT_INFO_EXCLUDE = (".git", "info", "exclude")
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
VENDORED_DIRS = frozenset(
    {"node_modules", "vendor", "third_party", "dist", "build", ".venv", "venv", "__pycache__"}
)
_MINIFIED = (".min.js", ".min.mjs", ".min.cjs")


def is_vendored(name: str, is_dir: bool) -> bool:
    """Whether an entry name is vendored or generated code."""
    return name in VENDORED_DIRS if is_dir else name.endswith(_MINIFIED)


class IgnoreSpec:
    """The patterns of one or more ignore-file lines, in order: the last one matching
    a path decides."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        # last first, as (negative, basename, test): a directory's and a file's
        last_first = [(p.negative, p.basename, p.tester(), p.dir_only) for p in reversed(patterns)]
        self._for_dirs = tuple(t[:3] for t in last_first)
        self._for_files = tuple(t[:3] for t in last_first if not t[3])

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True when ``path`` (relative to the lines' directory, no trailing ``/``) is
        ignored, False when re-included (``!``), None when no pattern matches."""
        raw = path.encode("utf-8", "surrogateescape")
        base = raw[raw.rfind(b"/") + 1 :]
        for negative, basename, test in self._for_dirs if is_dir else self._for_files:
            if test(base if basename else raw):
                return not negative
        return None

    def matches(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` is ignored by these patterns."""
        return bool(self.decide(path, is_dir))


def ignore_file_lines(data: bytes) -> list[str]:
    """An ignore file's lines as git reads them: a leading UTF-8 byte order mark
    skipped, split on ``\\n`` only (``\\r``, ``\\v``, ``\\f`` and the other line
    breaks of ``str.splitlines`` belong to the line), one ``\\r`` before it dropped, each
    line ending at a NUL (git keeps patterns as C strings); bytes that are not UTF-8
    are replaced."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    if lines[-1] == b"":  # the end of the last line, not a line
        lines.pop()
    return [
        line.removesuffix(b"\r").split(b"\0", 1)[0].decode("utf-8", "replace") for line in lines
    ]


def compile_lines(lines: Iterable[str]) -> tuple[IgnoreSpec, list[str]]:
    """A spec from ignore-file lines, and the lines that were invalid (dropped)."""
    patterns: list[Pattern] = []
    bad: list[str] = []
    for line in lines:
        try:
            pattern = compile_pattern(trim_trailing_spaces(line))
        except InvalidPattern:
            bad.append(line)
        else:
            if pattern is not None:
                patterns.append(pattern)
    return IgnoreSpec(patterns), bad


def compile_excludes(patterns: Sequence[str]) -> IgnoreSpec | None:
    """The ``excludes`` patterns as one spec; a malformed one raises InvalidInput."""
    if not patterns:
        return None
    spec, bad = compile_lines(patterns)
    if bad:
        raise InvalidInput(f"invalid exclude pattern {bad[0]!r}")
    return spec


@dataclass(frozen=True)
class IgnoreRules:
    """The ignore specs in force in one directory, shallowest first.

    Each is ``(base, spec)`` where ``base`` is the directory's path relative
    to the root, with a trailing ``/`` (empty for the root itself).
    """

    specs: tuple[tuple[str, IgnoreSpec], ...] = ()

    def with_directory(self, base: str, spec: IgnoreSpec | None) -> IgnoreRules:
        """These rules plus a directory's own (a no-op for None)."""
        return self if spec is None else IgnoreRules((*self.specs, (base, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the root) is ignored; deepest decision wins."""
        for base, spec in reversed(self.specs):
            decision = spec.decide(rel[len(base) :], is_dir)
            if decision is not None:
                return decision
        return False
