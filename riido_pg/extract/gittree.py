"""A git revision's tree, walked like a directory (``load DIR --rev REV``).

``open_revision(DIR, REV)`` reads the tree of commit REV from the repository at DIR
without checking it out, through one ``git cat-file --batch`` process: tree objects
are the directory listings, blobs the files. The walk's rules are the directory's
(:mod:`riido_pg.extract.walk`), so ``load DIR --rev REV`` gives exactly the documents
``load DIR`` gives on a clean checkout of REV:

* every directory's ``.gitignore`` and ``.ignore`` are read as they are at REV; the
  repository's ``info/exclude`` (not versioned: the file as it is now) applies when
  DIR is the work tree's top or the repository itself, as it does to a checkout;
* a symlink (mode 120000) is a symlink: counted, never followed; a submodule (a
  gitlink, mode 160000) is skipped like the empty directory a clean checkout has,
  and counted in ``skipped_submodules`` (``N submodules not read``);
* vendored folders, ``--lang``, ``--exclude``, the size limit, binary and non-UTF-8
  contents are decided as for a file on disk; a partial clone is refused (its
  missing objects could only be fetched, and nothing is), a blob missing anyway (a
  damaged repository) is counted as unreadable;
* contents are blobs as git stores them: no smudge filter (Git LFS), end-of-line
  conversion or ``working-tree-encoding`` is applied, so a checkout that rewrites
  files on the way out (``core.autocrlf``, filters in ``.gitattributes``) can differ.

DIR may be the work tree's top (the whole tree), a directory inside it (that subtree
at REV, relative paths as ``load`` of that directory gives them, ignore files above
it not read, as for a directory on disk), a bare repository or a ``.git`` directory
(the whole tree).
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO

from riido_pg.errors import InvalidInput
from riido_pg.extract.git import (
    GitFailed,
    Repository,
    git_command,
    git_env,
    open_repository,
)
from riido_pg.extract.ignore import GIT_INFO_EXCLUDE, IGNORE_FILES, ignore_file_lines
from riido_pg.extract.reading import Skipped, check_content, too_large
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import MAX_IGNORE_FILE_BYTES, Item, Kind, read_ignore_file

__all__ = ["CatFile", "MalformedTree", "Revision", "RevisionTree", "open_revision", "parse_tree"]

_KINDS: dict[bytes, Kind] = {
    b"40000": "dir",
    b"040000": "dir",  # as ls-tree prints it
    b"100644": "file",
    b"100755": "file",
    b"100664": "file",
    b"120000": "link",
    b"160000": "submodule",
}
_CHUNK = 1 << 20
#: Tree entry names git itself never writes (nor checks out): a tree holding one (or
#: a name with a ``/``) is malformed, and reading it is refused (:class:`MalformedTree`).
_BAD_NAMES = frozenset({b"", b".", b".."})


class MalformedTree(GitFailed):
    """A tree of the revision has an entry no checkout could write (``a/b.py``, ``..``)."""


def parse_tree(data: bytes, oid_bytes: int) -> list[Item]:
    """The entries of a raw tree object (``MODE NAME\\0OID`` each)."""
    items: list[Item] = []
    i, end = 0, len(data)
    while i < end:
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        oid = data[nul + 1 : nul + 1 + oid_bytes]
        if len(oid) != oid_bytes:
            raise ValueError("truncated tree object")
        raw = data[space + 1 : nul]
        if raw in _BAD_NAMES or b"/" in raw:
            raise ValueError(f"malformed tree entry {raw!r}")
        name = raw.decode("utf-8", "surrogateescape")
        items.append(Item(name, _KINDS.get(data[i:space], "file"), oid.hex()))
        i = nul + 1 + oid_bytes
    return items


class CatFile:
    """One ``git cat-file --batch`` process: objects by id, one at a time, or many
    asked ahead (:meth:`prefetch`) so that git never waits for the next question."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self._pending: deque[str] = deque()
        self._writer: threading.Thread | None = None
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            git_command(repository.path, "cat-file", "--batch"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=git_env(),
        )

    def _failed(self) -> GitFailed:
        self._stderr.seek(0)
        said = self._stderr.read().decode("utf-8", "replace").strip()
        return GitFailed(
            f"{self.repository.path}: git cat-file stopped" + (f": {said}" if said else "")
        )

    def prefetch(self, oids: Sequence[str]) -> None:
        """Ask for these objects now, in this order; :meth:`get` then takes their
        answers in the same order (an object not asked for by then is passed over)."""
        self._drain_writer()
        stdin = self._proc.stdin
        assert stdin is not None
        self._pending.extend(oids)
        lines = b"".join(oid.encode("ascii") + b"\n" for oid in oids)

        def write() -> None:
            try:
                stdin.write(lines)
                stdin.flush()
            except (OSError, ValueError):  # the process was stopped: get() reports it
                pass

        self._writer = threading.Thread(target=write, name="git-cat-file-writer", daemon=True)
        self._writer.start()

    def _drain_writer(self) -> None:
        if self._writer is not None:
            self._writer.join()
            self._writer = None

    def get(self, oid: str, limit: int | None = None) -> tuple[str, int, bytes | None] | None:
        """``(type, size, content)`` of an object, or None when it is missing; the
        content is None (and not kept) when it is over ``limit`` bytes."""
        while self._pending:
            asked = self._pending.popleft()
            if asked == oid:
                return self._answer(limit)
            self._answer(0)  # asked ahead but not wanted after all
        self._drain_writer()
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(oid.encode("ascii") + b"\n")
            stdin.flush()
        except BrokenPipeError:
            raise self._failed() from None
        return self._answer(limit)

    def _answer(self, limit: int | None) -> tuple[str, int, bytes | None] | None:
        stdout = self._proc.stdout
        assert stdout is not None
        header = stdout.readline()
        if not header.endswith(b"\n"):
            raise self._failed()
        fields = header.split()
        if len(fields) != 3:  # "<oid> missing" (or "ambiguous")
            return None
        kind, size = fields[1].decode("ascii"), int(fields[2])
        keep = limit is None or size <= limit
        chunks: list[bytes] = []
        left = size + 1  # the content, then a newline
        while left:
            chunk = stdout.read(min(left, _CHUNK))
            if not chunk:
                raise self._failed()
            left -= len(chunk)
            if keep:
                chunks.append(chunk)
        return kind, size, b"".join(chunks)[:-1] if keep else None

    def close(self) -> None:
        """Stop the process (it ends at the end of its input, or is killed when
        answers asked ahead are still unread)."""
        if self._pending:
            self._proc.kill()
            self._pending.clear()
        self._drain_writer()
        if self._proc.stdin is not None:
            try:
                self._proc.stdin.close()
            except OSError:  # a broken pipe: the process is gone
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()

    def __enter__(self) -> CatFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@dataclass
class RevisionTree:
    """A tree of a revision as the walk's :class:`~riido_pg.extract.walk.Tree`:
    handles are object ids, ``root`` the walked tree's. Listings are cached by id
    (the same subtree in another commit is the same object)."""

    cat: CatFile
    root: str
    oid_bytes: int
    #: The repository's ``info/exclude``, read at the root (None: not applied).
    info_exclude: Path | None = None
    listings: dict[str, list[Item]] = field(default_factory=dict)
    #: Ignore files' blobs, by id (read ahead by :meth:`preload`, or when first used).
    blobs: dict[str, tuple[str, int, bytes | None] | None] = field(default_factory=dict)

    def scan(self, path: str) -> list[Item]:
        items = self.listings.get(path)
        if items is None:
            found = self.cat.get(path)
            if found is None or found[0] != "tree" or found[2] is None:
                raise OSError(2, "object missing from the repository")
            try:
                items = parse_tree(found[2], self.oid_bytes)
            except ValueError as exc:
                raise OSError(5, "malformed tree object") from exc
            self.listings[path] = items
        return items

    def preload(self, repository: Repository) -> None:
        """Read every listing and ignore file of the tree now, in two requests (the
        whole walk then asks git nothing)."""
        out = repository.run("ls-tree", "-r", "-t", "-z", "--full-tree", self.root)
        by_path: dict[bytes, list[Item]] = {b"": []}
        trees: dict[bytes, str] = {b"": self.root}
        ignore_files: set[str] = set()
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, rel = record.partition(b"\t")
            mode, _, rest = meta.partition(b" ")
            oid = rest.partition(b" ")[2].decode("ascii")
            parent, _, name = rel.rpartition(b"/")
            if parent not in by_path or name in _BAD_NAMES:
                shown = rel.decode("utf-8", "replace")
                raise MalformedTree(
                    f"{repository.path}: malformed tree: entry {shown!r} (git checkout refuses it)"
                )
            item = Item(name.decode("utf-8", "surrogateescape"), _KINDS.get(mode, "file"), oid)
            by_path[parent].append(item)
            if item.kind == "dir":
                trees[rel] = oid
                by_path[rel] = []
            elif item.kind == "file" and item.name in IGNORE_FILES:
                ignore_files.add(oid)
        # one subtree may sit at several paths: it is one object, listed once
        listings = {trees[path]: items for path, items in by_path.items()}
        self.listings.update(listings)
        wanted = sorted(ignore_files)
        self.cat.prefetch(wanted)
        for oid in wanted:
            self.blobs[oid] = self.cat.get(oid, MAX_IGNORE_FILE_BYTES)

    def _ignore_file(self, item: Item, rel: str, stats: ExtractStats) -> list[str]:
        if item.kind == "link":
            stats.problem(rel, "ignore file not read: too many levels of symbolic links")
            return []
        if item.kind != "file":
            stats.problem(rel, "ignore file not read: is a directory")
            return []
        if item.path not in self.blobs:
            self.blobs[item.path] = self.cat.get(item.path, MAX_IGNORE_FILE_BYTES)
        found = self.blobs[item.path]
        if found is None:
            stats.problem(rel, "ignore file not read: object missing from the repository")
            return []
        if found[2] is None:
            stats.problem(rel, "ignore file not read: too large")
            return []
        return ignore_file_lines(found[2])

    def ignore_lines(self, path: str, base: str, stats: ExtractStats) -> list[str]:
        lines: list[str] = []
        if not base and self.info_exclude is not None:
            lines += read_ignore_file(str(self.info_exclude), "/".join(GIT_INFO_EXCLUDE), stats)
        by_name = {item.name: item for item in self.scan(path)}
        for name in IGNORE_FILES:
            if name in by_name:
                lines += self._ignore_file(by_name[name], base + name, stats)
        return lines

    def plan(self, paths: Sequence[str]) -> None:
        self.cat.prefetch(paths)

    def read(self, path: str, max_bytes: int) -> bytes | Skipped:
        found = self.cat.get(path, max_bytes)
        if found is None or found[0] != "blob":
            return Skipped("unreadable", "object missing from the repository")
        if found[2] is None:
            return too_large(found[1], max_bytes)
        return check_content(found[2])

    def content_id(self, path: str) -> str | None:
        return path  # a file's handle is its blob id


@dataclass
class Revision:
    """A checked revision of a repository; entering it starts the reader and gives
    the :class:`RevisionTree` of the walked directory."""

    repository: Repository
    #: The full commit id.
    commit: str
    #: The id of the tree walked (the commit's, or the subtree's).
    tree: str
    info_exclude: Path | None
    _cat: CatFile | None = None

    def __enter__(self) -> RevisionTree:
        self._cat = CatFile(self.repository)
        tree = RevisionTree(
            self._cat, self.tree, len(self.commit) // 2, info_exclude=self.info_exclude
        )
        try:
            tree.preload(self.repository)
        except BaseException:
            self._cat.close()
            raise
        return tree

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._cat is not None:
            self._cat.close()
            self._cat = None


def _object(repository: Repository, commit: str, path: str) -> tuple[str, str] | None:
    """``(id, type)`` of the object at ``path`` (``""``: the root) in ``commit``'s tree.
    The path goes to git as an argument, never in a line of input: it may hold
    newlines."""
    if not path:
        out = repository.run("rev-parse", "--verify", f"{commit}^{{tree}}")
        return out.decode("ascii").strip(), "tree"
    out = repository.run("ls-tree", "-z", "--full-tree", commit, "--", path)
    record = out.split(b"\0", 1)[0]
    meta, _, name = record.partition(b"\t")
    fields = meta.split()
    if len(fields) != 3 or name != path.encode("utf-8", "surrogateescape"):
        return None
    return fields[2].decode("ascii"), fields[1].decode("ascii")


def open_revision(directory: Path, rev: str) -> Revision:
    """The tree of ``rev`` at ``directory`` (see the module docstring), checked now:
    a directory in no repository, a revision naming no commit, or a subtree missing
    at that revision raises here, before anything is read."""
    repository = open_repository(directory)
    repository.check_complete()
    commit = repository.commit(rev)
    prefix = repository.prefix.rstrip("/")
    found = _object(repository, commit, prefix)
    if found is None or found[1] != "tree":
        what = "not a directory" if found is not None else "no such directory"
        raise InvalidInput(f"{directory}: {what} at revision {rev}")
    top = not repository.prefix
    return Revision(repository, commit, found[0], repository.info_exclude if top else None)
