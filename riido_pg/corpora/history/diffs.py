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

Memory does not grow with the size of a file: git's output is read as it comes, in
chunks, keeping of each patch line only its first bytes (all a ``diff --git``,
``index`` or ``@@`` line needs), and a file over the extraction's size limit (which
can never hold a target) is diffed as binary without being read, by git either
(``core.bigFileThreshold``): its old side has no lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from riido_pg.extract.api import DEFAULT_MAX_FILE_BYTES
from riido_pg.extract.git import Repository, git_output

__all__ = ["DIFF_OPTIONS", "OldSide", "changed_old_sides", "parse_diff", "parse_diff_stream"]

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
#: The bytes kept of each patch line: enough for an ``index`` line of 64-hex ids
#: and a hunk header of any line numbers.
_LINE_HEAD = 256
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class OldSide:
    """A parent-side file the commit changed: its path and blob in the parent, the
    old lines changed or deleted, and the old lines after which lines were inserted."""

    path: str
    oid: str
    lines: tuple[int, ...]
    insertions: tuple[int, ...]


def _line_heads(chunks: Iterator[bytes], first: bytes) -> Iterator[bytes]:
    """The first :data:`_LINE_HEAD` bytes of each line of ``first`` then ``chunks``."""
    head = bytearray()
    for chunk in _chain(first, chunks):
        pos = 0
        while True:
            nl = chunk.find(b"\n", pos)
            end = len(chunk) if nl < 0 else nl
            room = _LINE_HEAD - len(head)
            if room > 0:
                head += chunk[pos : min(end, pos + room)]
            if nl < 0:
                break
            yield bytes(head)
            head.clear()
            pos = nl + 1
    if head:
        yield bytes(head)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _hunks(lines: Iterable[bytes]) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """``(old line, old count)`` of each hunk, by the (old, new) blob ids of its file."""
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    current: tuple[str, str] | None = None
    for line in lines:
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


def _raw_records(
    chunks: Iterator[bytes],
) -> tuple[list[tuple[bytes, str, str, str, bytes]], bytes]:
    """The raw records at the head of the output (``:meta\0path\0[path\0]`` each),
    and what was read past them."""
    records: list[tuple[bytes, str, str, str, bytes]] = []
    buf = b""
    pos = 0
    done = False
    while True:
        while buf.startswith(b":", pos):
            end = buf.find(b"\0", pos)
            if end < 0:
                break
            mode, _, old, new, status = buf[pos + 1 : end].split(b" ")
            fields = 2 if status[:1] in (b"R", b"C") else 1
            at, paths = end + 1, []
            for _ in range(fields):
                stop = buf.find(b"\0", at)
                if stop < 0:
                    break
                paths.append(buf[at:stop])
                at = stop + 1
            if len(paths) < fields:
                break
            records.append((mode, old.decode(), new.decode(), status[:1].decode(), paths[0]))
            pos = at
        rest = buf[pos:]
        if done or (rest and not rest.startswith(b":")):
            return records, rest
        chunk = next(chunks, b"")
        done = not chunk
        buf, pos = rest + chunk, 0


def parse_diff_stream(chunks: Iterable[bytes]) -> list[OldSide]:
    """The old sides of the output of ``git diff-tree`` run with :data:`DIFF_OPTIONS`,
    given in chunks of any size (see the module docstring: memory does not grow with
    a patch's size)."""
    it = (chunk for chunk in chunks if chunk)  # an empty chunk is not the end
    records, rest = _raw_records(it)
    hunks = _hunks(_line_heads(it, rest))
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


def parse_diff(out: bytes) -> list[OldSide]:
    """The old sides of the whole output of ``git diff-tree`` (:func:`parse_diff_stream`)."""
    return parse_diff_stream([out])


def changed_old_sides(
    repository: Repository, parent: str, commit: str, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> list[OldSide]:
    """What ``commit`` changed on ``parent``'s side (GitFailed when git cannot say,
    e.g. objects missing from the repository); a file over ``max_file_bytes`` is
    diffed as binary (no lines), unread."""
    threshold = ("-c", f"core.bigFileThreshold={max_file_bytes}")
    with git_output(repository.path, *threshold, *DIFF_OPTIONS, parent, commit) as out:
        return parse_diff_stream(iter(lambda: out.read(_CHUNK), b""))
