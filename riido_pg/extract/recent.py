"""Which functions of a git revision changed recently: the recency prior's input.

A function of revision R is *recent* when git's diff between R and its first-parent
ancestor :data:`RECENT_COMMITS` commits back (or the oldest first-parent ancestor
the repository holds, when R has fewer: a young repository or a shallow clone)
touches its lines on R's side, by the rules a history corpus finds a commit's
targets with (:mod:`riido_pg.corpora.history.targets`): each changed line counts
for the innermost function containing it, and lines removed since count for the
innermost function containing both neighbours of where they were. A commit with no
parent has no recent function.

The diff is ``git diff-tree`` from R to the ancestor (plumbing, run as every git
command of riido-pg runs: :mod:`riido_pg.extract.git`), so "R's side" is that
diff's old side (:func:`~riido_pg.corpora.history.diffs.changed_old_sides`); a file
added since the ancestor is all changed lines. Only a load of a revision
(``--rev``) has recent functions: a work tree's files may differ from any commit.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from riido_pg.extract.model import Function

__all__ = ["RECENT_COMMITS", "RecentLines", "recent_lines"]

#: How many first-parent commits back "recently" reaches, chosen on the
#: development histories only (docs/evaluation.md "The recency prior").
RECENT_COMMITS = 21


@dataclass(slots=True)
class RecentLines:
    """R's lines changed since the ancestor, per path relative to the directory
    read, and the functions seen in those files (:meth:`see`) until :meth:`ids`."""

    #: path -> R's changed lines, and the lines after which lines were removed.
    lines: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    _seen: dict[str, list[tuple[int, int, str]]] = field(default_factory=lambda: defaultdict(list))

    def see(self, function: Function) -> None:
        """Note a function the load keeps (only those of changed files are kept)."""
        path = function.metadata["path"]
        if path in self.lines:
            first = _first_line(function)
            self._seen[path].append((first, function.metadata["end_line"], function.id))

    def ids(self) -> frozenset[str]:
        """The ids of the recent functions among those seen."""
        found: set[str] = set()
        for path, spans in self._seen.items():
            spans.sort(key=lambda s: (s[0], -s[1]))
            firsts = [s[0] for s in spans]
            changed, removed = self.lines[path]
            probes = [(n, n) for n in changed] + [(n, n + 1) for n in removed]
            for low, high in probes:
                i = bisect.bisect_right(firsts, low)
                while i > 0:  # the innermost span holding low ... high
                    i -= 1
                    if spans[i][1] >= high:
                        found.add(spans[i][2])
                        break
        return frozenset(found)


def _first_line(function: Function) -> int:
    """The first line of a function's document text (its leading comments,
    decorators or annotations), as a history corpus's targets count it."""
    text = function.text[:-1] if function.text.endswith("\n") else function.text
    first = function.metadata["end_line"] - text.count("\n")
    return min(first, function.metadata["start_line"])


def recent_lines(root: Path, rev: str, commits: int = RECENT_COMMITS) -> RecentLines:
    """The lines of revision ``rev`` of the repository at ``root`` changed in its last
    ``commits`` first-parent commits (see the module docstring), by path relative to
    ``root`` (a directory inside the work tree reads that subtree)."""
    from riido_pg.corpora.history.diffs import changed_old_sides
    from riido_pg.extract.git import open_repository

    repository = open_repository(root)
    commit = repository.commit(rev)
    chain = repository.run(
        "rev-list", "--first-parent", f"--max-count={commits + 1}", commit, "--"
    ).split()
    if len(chain) < 2:
        return RecentLines()
    ancestor = chain[-1].decode("ascii")
    prefix = repository.prefix
    lines: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for side in changed_old_sides(repository, commit, ancestor):
        if not side.path.startswith(prefix) or not (side.lines or side.insertions):
            continue
        lines[side.path[len(prefix) :]] = (side.lines, side.insertions)
    return RecentLines(lines)
