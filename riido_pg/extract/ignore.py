"""Which entries of the tree are left out: ignore files, excludes, vendored code.

Ignore files follow git's rules (pathspec's ``GitIgnoreSpec``): a
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

from pathspec import GitIgnoreSpec

from riido_pg.errors import InvalidInput

__all__ = [
    "GIT_INFO_EXCLUDE",
    "IGNORE_FILES",
    "VCS_DIRS",
    "VENDORED_DIRS",
    "IgnoreRules",
    "compile_excludes",
    "compile_lines",
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


def compile_lines(lines: Iterable[str]) -> tuple[GitIgnoreSpec, list[str]]:
    """A spec from ignore-file lines, and the lines that were invalid (dropped)."""
    good: list[str] = []
    bad: list[str] = []
    for line in lines:
        try:
            GitIgnoreSpec.from_lines([line])
        except Exception:  # pathspec raises several kinds for a malformed pattern
            bad.append(line)
        else:
            good.append(line)
    return GitIgnoreSpec.from_lines(good), bad


def compile_excludes(patterns: Sequence[str]) -> GitIgnoreSpec | None:
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

    specs: tuple[tuple[str, GitIgnoreSpec], ...] = ()

    def with_directory(self, base: str, spec: GitIgnoreSpec | None) -> IgnoreRules:
        """These rules plus a directory's own (a no-op for None)."""
        return self if spec is None else IgnoreRules((*self.specs, (base, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` (relative to the root) is ignored; deepest decision wins."""
        for base, spec in reversed(self.specs):
            local = rel[len(base) :] + ("/" if is_dir else "")
            result = spec.check_file(local)
            if result.include is not None:
                return result.include
        return False
