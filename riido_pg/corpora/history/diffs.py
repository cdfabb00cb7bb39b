"""What a commit changed on the parent's side: files, and lines of each.

``git diff-tree -r -M --raw -p -U0 PARENT COMMIT`` (plumbing, so the user's diff
configuration does not apply; the algorithm, heuristic and rename limit are pinned
anyway) gives every changed file pair and, for text files, its hunks without
context. Only the parent's side counts:

* a modified, renamed (with ``-M``'s 50% similarity: the old path), deleted or
  type-changed file whose old side is a regular file is an :class:`OldSide`;
  added files and symlinks or submodules on the old side are not;
* a hunk ``@@ -a,b +c,d @@`` with ``b > 0`` changed or deleted old lines
  ``a … a+b-1``; with ``b == 0`` it is a pure insertion after old line ``a``
  (``0``: before the first line), kept as an insertion point;
* a pure rename or mode change has no hunks, nor has a binary file: no lines.

Hunks are matched to their file pair by the full blob ids on the patch's
``index`` line (a type change's patch is a deletion and an addition), so no
quoted path is ever parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from riido_pg.extract.git import Repository

__all__ = ["DIFF_OPTIONS", "OldSide", "changed_old_sides", "parse_diff"]

#: The options of the diff (see the module docstring).
DIFF_OPTIONS = (
    "diff-tree",
    "-r",
    "-z",
    "--raw",
    "-p",
    "-U0",
    "-M",
    "-l1000",
    "--no-abbrev",
    "--full-index",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--inter-hunk-context=0",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
)
_REGULAR = frozenset({b"100644", b"100755", b"100664"})
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_INDEX = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)")


@dataclass(frozen=True, slots=True)
class OldSide:
    """A parent-side file the commit changed: its path and blob in the parent, the
    old lines changed or deleted, and the old lines after which lines were inserted."""

    path: str
    oid: str
    lines: tuple[int, ...]
    insertions: tuple[int, ...]


def _hunks(patch: bytes) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """``(old line, old count)`` of each hunk, by the (old, new) blob ids of its file."""
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    current: tuple[str, str] | None = None
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            current = None
        elif line.startswith(b"index "):
            match = _INDEX.match(line)
            if match is not None:
                current = (match.group(1).decode("ascii"), match.group(2).decode("ascii"))
        elif line.startswith(b"@@ -") and current is not None:
            hunk = _HUNK.match(line)
            if hunk is not None:
                count = int(hunk.group(2)) if hunk.group(2) is not None else 1
                out.setdefault(current, []).append((int(hunk.group(1)), count))
    return out


def parse_diff(out: bytes) -> list[OldSide]:
    """The old sides of the output of ``git diff-tree`` run with :data:`DIFF_OPTIONS`."""
    records: list[tuple[bytes, str, str, str, bytes]] = []
    pos = 0
    while out.startswith(b":", pos):
        end = out.index(b"\0", pos)
        mode, _, old, new, status = out[pos + 1 : end].split(b" ")
        pos = end + 1
        paths: list[bytes] = []
        for _ in range(2 if status[:1] in (b"R", b"C") else 1):
            end = out.index(b"\0", pos)
            paths.append(out[pos:end])
            pos = end + 1
        records.append((mode, old.decode(), new.decode(), status[:1].decode(), paths[0]))
    hunks = _hunks(out[pos:])
    sides: list[OldSide] = []
    for old_mode, old_oid, new_oid, kind, raw_path in records:
        if old_mode not in _REGULAR or kind not in ("M", "R", "D", "T"):
            continue
        zero = "0" * len(old_oid)
        key = (old_oid, zero if kind in ("D", "T") else new_oid)
        lines: list[int] = []
        insertions: list[int] = []
        for start, count in hunks.get(key, []):
            if count:
                lines.extend(range(start, start + count))
            else:
                insertions.append(start)
        sides.append(
            OldSide(
                raw_path.decode("utf-8", "surrogateescape"),
                old_oid,
                tuple(sorted(set(lines))),
                tuple(sorted(set(insertions))),
            )
        )
    return sides


def changed_old_sides(repository: Repository, parent: str, commit: str) -> list[OldSide]:
    """What ``commit`` changed on ``parent``'s side (GitFailed when git cannot say,
    e.g. objects missing from the repository)."""
    return parse_diff(repository.run(*DIFF_OPTIONS, parent, commit))
