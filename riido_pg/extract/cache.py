"""What a file held, remembered by content across revisions of one repository.

Reading a history snapshot by snapshot (``riido-pg eval`` over a history corpus, a
script loading commit after commit with ``--rev``) parses almost the same files each
time: consecutive commits share nearly every blob. A :class:`FileCache` handed to
:func:`~riido_pg.extract.api.iter_functions` (``cache=``) keeps each parsed file's
functions under its path and git blob id, so the next revision parses only the files
that changed (the in-memory cache does not even read the others; the stored one reads
each file, to check its entry against the bytes). It applies only to trees read at a
revision (a directory on disk has no content ids); the output is the same as without
it, counts and problems included.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import hmac
import json
import os
import re
import stat
import tempfile
import time
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.reading import Skipped

__all__ = ["FileCache", "StoredFileCache", "stored_cache_path"]

#: (relative path, blob id, language, the largest file read): the same bytes at the
#: same path in the same language give the same functions, ids included.
Key = tuple[str, str, str, int]


class FileCache:
    """Parsed files (or why a file was skipped: binary, too large, …) by path, blob
    id, language and size limit, the oldest forgotten first once ``max_files`` are
    held."""

    def __init__(self, max_files: int = 100_000) -> None:
        if max_files < 1:
            raise ValueError("max_files must be at least 1")
        self.max_files = max_files
        self._files: dict[Key, FileFunctions | Skipped] = {}
        #: Files answered from the cache, and files parsed.
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, key: object) -> bool:
        return key in self._files

    #: Whether ``get`` must be shown the file's content (read again) to answer.
    checks_content = False

    def get(
        self, key: Key, content: bytes | Skipped | None = None
    ) -> FileFunctions | Skipped | None:
        """What the file under ``key`` gave, or None; ``content`` (the file as read
        now) is needed only when ``checks_content``."""
        found = self._files.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def flush(self) -> None:
        """Keep what was parsed beyond this process (nothing to do in memory)."""

    def put(
        self, key: Key, found: FileFunctions | Skipped, content: bytes | Skipped | None = None
    ) -> None:
        """Keep what the file gave (``content``: the bytes it was parsed from)."""
        if key not in self._files and len(self._files) >= self.max_files:
            del self._files[next(iter(self._files))]
        self._files[key] = found


#: Bumped when the stored file's layout changes.
STORED_FORMAT = 2
#: A stored file decompressing to more is not read (a gzip bomb).
MAX_STORED_BYTES = 1 << 30
_KEY_BYTES = 32
_TEMP_PREFIX = ".files."
_TEMP_NAME = re.compile(re.escape(_TEMP_PREFIX) + r"[A-Za-z0-9_]{8}")
#: When this process started: a temporary file older than that, that no writer holds,
#: was left by a killed run.
_STARTED = time.time()


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


def _encode(found: FileFunctions | Skipped) -> list[Any]:
    from riido_pg.extract.reading import Skipped

    if isinstance(found, Skipped):
        return ["skipped", found.kind, found.reason]
    functions = [[f.id, f.text, f.metadata] for f in found.functions]
    return ["functions", functions, found.too_deep, found.long_ids, found.steps]


_METADATA = {"language": str, "path": str, "qualname": str, "start_line": int, "end_line": int}


def _check(ok: bool) -> None:
    if not ok:
        raise ValueError("not a cache entry")


def _count(value: object) -> int:
    if type(value) is not int or value < 0:
        raise ValueError("not a count")
    return value


def _decode(data: object) -> FileFunctions | Skipped:
    """A stored entry's result, every field of the right type (ValueError if not)."""
    from riido_pg.extract.functions import FileFunctions
    from riido_pg.extract.model import Function, FunctionMetadata
    from riido_pg.extract.reading import Skipped

    _check(isinstance(data, list) and len(data) in (3, 5))
    assert isinstance(data, list)
    if data[0] == "skipped":
        _check(len(data) == 3 and all(isinstance(x, str) for x in data[1:]))
        _check(data[1] in ("unreadable", "too_large", "binary", "undecodable"))
        return Skipped(data[1], data[2])
    _check(data[0] == "functions" and len(data) == 5 and isinstance(data[1], list))
    functions = []
    for item in data[1]:
        _check(isinstance(item, list) and len(item) == 3)
        fid, text, meta = item
        _check(isinstance(fid, str) and isinstance(text, str) and isinstance(meta, dict))
        _check(meta.keys() == _METADATA.keys())
        _check(all(type(meta[k]) is t for k, t in _METADATA.items()))
        functions.append(Function(fid, text, cast(FunctionMetadata, meta)))
    counts = [_count(x) for x in data[2:]]
    return FileFunctions(functions, too_deep=counts[0], long_ids=counts[1], steps=counts[2])


def _fingerprint(content: bytes) -> list[Any]:
    """What an entry says of the bytes it was parsed from: their size and sha-256."""
    return [len(content), hashlib.sha256(content).hexdigest()]


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


def _sign(secret: bytes, entry: list[Any]) -> str:
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    return hmac.new(secret, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


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


class StoredFileCache(FileCache):
    """A :class:`FileCache` kept in a file between runs: ``riido-pg load REPO --rev
    REV`` in a shell loop over a history parses only what each commit changed.

    The file keeps the files the last run read (one tree's worth, so it does not grow
    with the history), under the extractor's digest: a file of other rules, or one
    that cannot be read whatever the damage, is ignored (the run parses everything)
    and replaced. Each entry holds the size and sha-256 of the bytes it was parsed
    from and is signed with a key kept beside it (``.key``, made on first use, owner
    only): a file is read again at each run and an entry is used only when its
    signature holds and the bytes are the same; any other entry is parsed again.
    Written whole and renamed into place; concurrent runs each leave a valid file, and
    the temporary files of a run killed while writing are deleted by the next."""

    checks_content = True

    def __init__(self, path: Path, max_files: int = 100_000) -> None:
        super().__init__(max_files)
        self.path = path
        self._used: set[Key] = set()
        self._fingerprints: dict[Key, list[Any]] = {}
        self._digest = _extractor_digest()
        self._secret = _secret(path.parent)
        if self._secret is not None:
            self._read(self._secret)

    def _read(self, secret: bytes) -> None:
        try:
            with gzip.open(self.path, "rb") as fh:
                raw = fh.read(MAX_STORED_BYTES + 1)
            _check(len(raw) <= MAX_STORED_BYTES)
            data = json.loads(raw)
            _check(isinstance(data, dict))
            if data.get("format") != STORED_FORMAT or data.get("extractor") != self._digest:
                return
            _check(isinstance(data.get("files"), list))
            for entry in data["files"]:
                _check(isinstance(entry, list) and len(entry) == 8)
                rel, oid, lang, limit, size, sha, found, signature = entry
                _check(all(isinstance(x, str) for x in (rel, oid, lang, sha, signature)))
                _check(_count(limit) >= 0 and _count(size) >= 0)
                if not hmac.compare_digest(signature, _sign(secret, entry[:7])):
                    continue  # not written by riido-pg under this key: never trusted
                key = (rel, oid, lang, limit)
                self._files[key] = _decode(found)
                self._fingerprints[key] = [size, sha]
        except Exception:  # any damage at all: start empty (the run parses everything)
            self._files.clear()
            self._fingerprints.clear()

    def get(
        self, key: Key, content: bytes | Skipped | None = None
    ) -> FileFunctions | Skipped | None:
        found = self._files.get(key)
        expected = self._fingerprints.get(key)
        # used only for the very bytes it was parsed from
        if (
            found is None
            or expected is None
            or not isinstance(content, bytes)
            or _fingerprint(content) != expected
        ):
            self.misses += 1
            return None
        self.hits += 1
        self._used.add(key)
        return found

    def put(
        self, key: Key, found: FileFunctions | Skipped, content: bytes | Skipped | None = None
    ) -> None:
        super().put(key, found)
        if isinstance(content, bytes):
            self._fingerprints[key] = _fingerprint(content)
            self._used.add(key)

    def flush(self) -> None:
        """Store what this run read, if it parsed anything new (best effort: a cache
        that cannot be written is skipped, never an error)."""
        if not self.misses or self._secret is None:
            return
        files = []
        for key in sorted(self._used):
            if key in self._files and key in self._fingerprints:
                entry = [*key, *self._fingerprints[key], _encode(self._files[key])]
                files.append([*entry, _sign(self._secret, entry)])
        body = {"format": STORED_FORMAT, "extractor": self._digest, "files": files}
        try:
            directory = os.path.dirname(self.path)
            os.makedirs(directory, exist_ok=True)
            _remove_stale_temporaries(directory)
            fd, tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=directory)
            try:
                with os.fdopen(fd, "wb") as raw:
                    fcntl.flock(raw.fileno(), fcntl.LOCK_EX)  # held until renamed: not stale
                    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as fh:
                        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
                        fh.write(text.encode())
                    raw.flush()
                    os.replace(tmp, self.path)
            except BaseException:
                with suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            pass


def stored_cache_path(home: Path, git_dir: Path) -> Path:
    """Where the stored cache of the repository at ``git_dir`` lives under ``home``."""
    name = hashlib.sha256(os.fsencode(git_dir.resolve())).hexdigest()[:20]
    return home / "cache" / "files" / f"{name}.json.gz"
