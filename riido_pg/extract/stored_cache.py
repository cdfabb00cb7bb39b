"""The parse cache ``load --rev`` keeps between runs, in a small SQLite file.

Its memory does not grow with the tree: the last run's file is looked up entry by
entry (an index of path, blob id, language and size limit), and what this run reads
is written to a new file as it goes (each entry compressed on its own), which
replaces the old one at the end. SQLite keeps a bounded page cache of each.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import re
import sqlite3
import stat
import tempfile
import time
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from riido_pg.extract.cache import FileCache, Key, check, decode_found, encode_found

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.reading import Skipped

__all__ = ["StoredFileCache", "stored_cache_path"]

#: Bumped when the stored file's layout changes.
STORED_FORMAT = 3
_KEY_BYTES = 32
_TEMP_PREFIX = ".files."
_TEMP_NAME = re.compile(re.escape(_TEMP_PREFIX) + r"[A-Za-z0-9_]{8}")
#: When this process started: a temporary file older than that, that no writer holds,
#: was left by a killed run.
_STARTED = time.time()

_SCHEMA = (
    "CREATE TABLE meta (format INTEGER NOT NULL, extractor TEXT NOT NULL)",
    "CREATE TABLE files (path BLOB NOT NULL, oid TEXT NOT NULL, language TEXT NOT NULL,"
    " max_bytes INTEGER NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,"
    " found BLOB NOT NULL, signature TEXT NOT NULL,"
    " PRIMARY KEY (path, oid, language, max_bytes)) WITHOUT ROWID",
)
_LOOKUP = (
    "SELECT size, sha256, found, signature FROM files"
    " WHERE path = ? AND oid = ? AND language = ? AND max_bytes = ?"
)
#: A stored row: (path, blob id, language, size limit, size, sha-256, found, signature).
Row = tuple[bytes, str, str, int, int, str, bytes, str]


def _extractor_digest() -> str:
    """A digest of everything that shapes a parse: the extractor's own source (every
    module of ``riido_pg.extract``, its naming rules included) and the versions of
    tree-sitter and of each grammar package. A cache written under another digest is
    not read."""
    from riido_pg.extract.grammars import grammar_distributions

    here = Path(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for path in sorted(here.rglob("*.py")):
        h.update(path.relative_to(here).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    for name in ("tree-sitter", *grammar_distributions()):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        h.update(f"{name}=={version}\0".encode())
    return h.hexdigest()[:32]


def _fingerprint(content: bytes) -> tuple[int, str]:
    """What an entry says of the bytes it was parsed from: their size and sha-256."""
    return len(content), hashlib.sha256(content).hexdigest()


def _secret(directory: Path) -> bytes | None:
    """The key the entries of this cache directory are signed with, made on first use
    (readable by its owner only); None when it can be neither read nor made."""
    path = directory / ".key"
    for _ in range(2):
        try:
            with open(path, "rb", opener=_no_follow) as fh:
                owner = os.fstat(fh.fileno()).st_uid
                key = fh.read(_KEY_BYTES + 1)
            if len(key) == _KEY_BYTES and owner == os.geteuid():
                return key
            os.unlink(path)  # damaged, or not ours: made again
        except FileNotFoundError:
            pass
        except OSError:
            return None
        try:
            os.makedirs(directory, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(os.urandom(_KEY_BYTES))
        except FileExistsError:
            continue  # another run made it just now: read that one
        except OSError:
            return None
    return None


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def _sign(secret: bytes, digest: str, row: tuple[Any, ...]) -> str:
    """The signature of a row's first seven fields (the compressed entry included, so
    nothing unsigned is ever decompressed), under the extractor's digest."""
    path, oid, language, limit, size, sha, found = row
    check(isinstance(path, bytes) and isinstance(found, bytes))
    head = json.dumps([STORED_FORMAT, digest, oid, language, limit, size, sha])
    message = b"\0".join([head.encode(), path, found])
    check(b"\0" not in path)
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _remove_stale_temporaries(directory: str) -> None:
    """Delete the temporary files of writes that never finished (a run killed while
    writing): named as riido-pg names them, owned by this user, older than this run
    and held by no writer (each writer locks its file until it is renamed)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not _TEMP_NAME.fullmatch(name):
            continue
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if (
                stat.S_ISREG(info.st_mode)
                and info.st_uid == os.geteuid()
                and info.st_mtime < _STARTED
            ):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError while written
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


def _open_previous(path: Path, digest: str) -> sqlite3.Connection | None:
    """The last run's file, read-only, if it is one of this format and extractor."""
    try:
        if not path.is_file():
            return None
        uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
        db = sqlite3.connect(uri, uri=True, check_same_thread=False)
    except (OSError, ValueError, sqlite3.Error):
        return None
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        db.execute("PRAGMA cache_size = -2048")
        meta = db.execute("SELECT format, extractor FROM meta").fetchall()
        if meta == [(STORED_FORMAT, digest)]:
            return db
    except Exception:  # not a file of ours, or damaged: not read
        pass
    db.close()
    return None


class _Writer:
    """This run's file, written as the walk goes: a temporary file beside the stored
    one, locked by its writer until it is renamed into place (or deleted)."""

    def __init__(self, path: Path, digest: str) -> None:
        self.path = path
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        _remove_stale_temporaries(directory)
        self.fd, self.tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=directory)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)  # held until renamed: not stale
            self.db = sqlite3.connect(self.tmp, check_same_thread=False)
            for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -2048"):
                self.db.execute(f"PRAGMA {pragma}")
            for statement in _SCHEMA:
                self.db.execute(statement)
            self.db.execute("INSERT INTO meta VALUES (?, ?)", (STORED_FORMAT, digest))
        except BaseException:
            self.discard()
            raise

    def add(self, row: Row) -> None:
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def finish(self) -> None:
        """Put the file in place of the stored one."""
        try:
            self.db.commit()
            self.db.close()
            os.replace(self.tmp, self.path)
        except BaseException:
            self.discard()
            raise
        os.close(self.fd)
        # the file of the format before this one (one JSON document), if any
        with suppress(OSError):
            os.unlink(self.path.with_name(self.path.stem + ".json.gz"))

    def discard(self) -> None:
        with suppress(Exception):
            self.db.close()
        with suppress(OSError):
            os.unlink(self.tmp)
        with suppress(OSError):
            os.close(self.fd)


class StoredFileCache(FileCache):
    """A :class:`~riido_pg.extract.cache.FileCache` kept in a file between runs:
    ``riido-pg load REPO --rev REV`` in a shell loop over a history parses only what
    each commit changed.

    The file keeps the files the last run read (one tree's worth, so it does not grow
    with the history), under the extractor's digest: a file of other rules, or one
    that cannot be read whatever the damage, is ignored (the run parses what it cannot
    find) and replaced. Each entry holds the size and sha-256 of the bytes it was
    parsed from and is signed with a key kept beside it (``.key``, made on first use,
    owner only): a file is read again at each run and an entry is used only when its
    signature holds and the bytes are the same; any other entry is parsed again.
    Neither file is held in memory: the last run's entries are looked up one by one
    and this run's are written to a temporary file as they come, renamed into place by
    :meth:`flush` (only if something new was parsed) and deleted by :meth:`close`
    otherwise; concurrent runs each leave a valid file, and the temporary files of a
    run killed while writing are deleted by the next."""

    checks_content = True

    def __init__(self, path: Path, max_files: int = 100_000) -> None:
        super().__init__(max_files)
        self.path = path
        self._digest = _extractor_digest()
        self._secret = _secret(Path(os.path.dirname(path)))
        self._previous: sqlite3.Connection | None = None
        self._writer: _Writer | None = None
        self._writable = self._secret is not None
        if self._secret is not None:
            self._previous = _open_previous(path, self._digest)

    def _lookup(self, key: Key) -> Row | None:
        """The last run's entry of ``key`` if its signature holds (any error: the old
        file is no longer read)."""
        if self._previous is None or self._secret is None:
            return None
        try:
            rel, oid, language, limit = key
            stored = (rel.encode("utf-8", "surrogatepass"), oid, language, limit)
            found = self._previous.execute(_LOOKUP, stored).fetchone()
            if found is None:
                return None
            size, sha, entry, signature = found
            row = (*stored, size, sha, entry, signature)
            check(isinstance(signature, str) and type(size) is int and isinstance(sha, str))
            if hmac.compare_digest(signature, _sign(self._secret, self._digest, row[:7])):
                return cast(Row, row)
            return None  # not written by riido-pg under this key: never trusted
        except Exception:
            self._forget_previous()
            return None

    def _forget_previous(self) -> None:
        if self._previous is not None:
            with suppress(Exception):
                self._previous.close()
            self._previous = None

    def __len__(self) -> int:
        """The last run's entries whose signature holds."""
        if self._previous is None or self._secret is None:
            return 0
        n = 0
        try:
            for row in self._previous.execute("SELECT * FROM files"):
                check(len(row) == 8 and isinstance(row[7], str))
                n += hmac.compare_digest(row[7], _sign(self._secret, self._digest, row[:7]))
        except Exception:
            return 0
        return n

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and self._lookup(cast(Key, key)) is not None

    def get(
        self, key: Key, content: bytes | Skipped | None = None
    ) -> FileFunctions | Skipped | None:
        row = self._lookup(key)
        found = None
        # used only for the very bytes it was parsed from
        if row is not None and isinstance(content, bytes) and _fingerprint(content) == row[4:6]:
            with suppress(Exception):  # a signed entry that cannot be read: parsed again
                found = decode_found(row[6])
        if found is None or row is None:
            self.misses += 1
            return None
        self.hits += 1
        self._keep(row)
        return found

    def put(
        self, key: Key, found: FileFunctions | Skipped, content: bytes | Skipped | None = None
    ) -> None:
        if not isinstance(content, bytes) or not self._writable or self._secret is None:
            return
        rel, oid, language, limit = key
        try:
            head = (rel.encode("utf-8", "surrogatepass"), oid, language, limit)
            row = (*head, *_fingerprint(content), encode_found(found))
            self._keep((*row, _sign(self._secret, self._digest, row)))
        except ValueError:
            pass  # a path no entry can hold (a NUL): parsed again next time

    def _keep(self, row: Row) -> None:
        """Write ``row`` to this run's file (best effort: a cache that cannot be
        written is skipped, never an error)."""
        if not self._writable:
            return
        try:
            if self._writer is None:
                self._writer = _Writer(self.path, self._digest)
            self._writer.add(row)
        except (OSError, sqlite3.Error):
            self._writable = False
            self.close()

    def flush(self) -> None:
        """Put what this run read in place of the stored file, if it parsed anything
        new (else the stored file is left as it is)."""
        writer, self._writer = self._writer, None
        self._forget_previous()
        if writer is None:
            return
        if not self.misses:
            writer.discard()
            return
        with suppress(OSError, sqlite3.Error):
            writer.finish()

    def close(self) -> None:
        """Delete this run's unfinished file (the walk stopped before ``flush``)."""
        writer, self._writer = self._writer, None
        self._forget_previous()
        if writer is not None:
            writer.discard()


def stored_cache_path(home: Path, git_dir: Path) -> Path:
    """Where the stored cache of the repository at ``git_dir`` lives under ``home``."""
    name = hashlib.sha256(os.fsencode(git_dir.resolve())).hexdigest()[:20]
    return home / "cache" / "files" / f"{name}.sqlite"
