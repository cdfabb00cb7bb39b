"""Which functions of a git revision changed recently: the recency prior's input.

A function of revision R is *recent* when git's diff between R and its first-parent
ancestor :data:`RECENT_COMMITS` commits back (or the oldest first-parent ancestor
the repository holds, when R has fewer: a young repository or a shallow clone)
touches its lines on R's side, by the rules a history corpus finds a commit's
targets with (:mod:`riido_pg.extract.spans`): each changed line counts
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

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from riido_pg.extract.spans import function_spans, touched

if TYPE_CHECKING:
    from riido_pg.corpora.history.diffs import OldSide
    from riido_pg.extract.model import Function

__all__ = ["RECENT_COMMITS", "RecentLines", "recent_lines"]

#: How many first-parent commits back "recently" reaches, chosen on the
#: development histories only (docs/evaluation.md "The recency prior").
RECENT_COMMITS = 21


@dataclass(slots=True)
class RecentLines:
    """What the diff changed on R's side, per path relative to the directory read,
    and the functions seen in those files (:meth:`see`) until :meth:`ids`."""

    sides: dict[str, OldSide] = field(default_factory=dict)
    _seen: dict[str, list[Function]] = field(default_factory=dict)

    def see(self, function: Function) -> None:
        """Note a function the load keeps (only those of changed files are kept)."""
        path = function.metadata["path"]
        if path in self.sides:
            self._seen.setdefault(path, []).append(function)

    def ids(self) -> frozenset[str]:
        """The ids of the recent functions among those seen: the innermost function
        of each changed line, as a history corpus finds its targets
        (:func:`~riido_pg.extract.spans.touched`)."""
        return frozenset(
            span.function.id
            for path, functions in self._seen.items()
            for span in touched(
                function_spans(functions),
                self.sides[path].lines,
                self.sides[path].insertions,
                lambda _: True,
            )
        )


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
    return RecentLines(
        {
            side.path[len(prefix) :]: side
            for side in changed_old_sides(repository, commit, ancestor)
            if side.path.startswith(prefix) and (side.lines or side.insertions)
        }
    )
