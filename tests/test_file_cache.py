"""The parse cache ``load --rev`` keeps between runs (``StoredFileCache``): damage of
any kind, other extraction rules or grammars, forged entries and a write killed
half-way never change the documents and never fail the run.

No database is needed: a small repository is built with ``git`` in tmp_path.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from support.gitrepos import Repo

from riido_pg.extract import stored_cache as cache_module
from riido_pg.extract import tree_documents
from riido_pg.extract.stored_cache import StoredFileCache, stored_cache_path

PY = "def {name}(x):\n    return x + 1\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("src/app.py", PY.format(name="run") + "\n\n" + PY.format(name="stop"))
    r.write("src/other.py", PY.format(name="other"))
    r.write("src/util.go", "package util\n\nfunc Add(a, b int) int { return a + b }\n")
    r.write("bin/blob.py", b"def f():\n    return 1\n\x00")
    r.commit("first")
    return r


def docs(repo: Repo, cache: Any = None) -> list[tuple[str, str]]:
    return [(d.id, d.text) for d in tree_documents(repo.path, rev="HEAD", cache=cache)]


def cache_path(repo: Repo, tmp_path: Path) -> Path:
    return stored_cache_path(tmp_path / "home", repo.path / ".git")


def warm(repo: Repo, path: Path) -> list[tuple[str, str]]:
    """Parse HEAD through a fresh stored cache, which writes the file; the documents."""
    got = docs(repo, StoredFileCache(path))
    assert path.is_file() and len(StoredFileCache(path)) >= 3  # the three source files
    return got


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def rewrite(path: Path, sql: str, *params: Any) -> None:
    """The stored file changed by ``sql`` (a valid SQLite file still)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(sql, params)
        db.commit()


def entry(path: Path, rel: str) -> list[Any]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT * FROM files WHERE path = ?", (rel.encode(),)).fetchone()
    return list(row)


def flip(raw: bytes) -> bytes:
    middle = len(raw) // 2
    return raw[:middle] + bytes([raw[middle] ^ 0x55]) + raw[middle + 1 :]


def every_page_flipped(raw: bytes) -> bytes:
    """A byte flipped in every 4 KiB page past the header."""
    data = bytearray(raw)
    for at in range(4096 + 100, len(data), 4096):
        data[at] ^= 0xFF
    return bytes(data)


#: Damage that leaves nothing of the file readable: nothing is used.
DAMAGE = {
    "magic flipped": lambda raw: bytes([raw[0] ^ 0x55]) + raw[1:],
    "bad page size": lambda raw: raw[:16] + b"\x00\x03" + raw[18:],
    "truncated to its header": lambda raw: raw[:100],
    "empty": lambda raw: b"",
    "not sqlite": lambda raw: b"SQLite format 3\0 not sqlite at all",
    "the old gzip format": lambda raw: gzip.compress(b'{"format": 2, "files": []}'),
    "deeply nested": lambda raw: gzip.compress(nested(200_000)),
    "zeros": lambda raw: bytes(len(raw)),
}  # fmt: skip
#: Damage that may leave some of it readable: what is used is what it held.
PARTIAL = {
    "flipped byte": flip,
    "every page flipped": every_page_flipped,
    "truncated": lambda raw: raw[: len(raw) // 2],
}  # fmt: skip


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_file_is_ignored_and_replaced(repo: Repo, tmp_path: Path, damage: str) -> None:
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    path.write_bytes(DAMAGE[damage](path.read_bytes()))
    damaged = StoredFileCache(path)
    assert len(damaged) == 0
    assert docs(repo, damaged) == expected  # parsed again, no error
    assert len(StoredFileCache(path)) >= 3  # and replaced by a good file


@pytest.mark.parametrize("damage", sorted(PARTIAL))
def test_a_partly_damaged_file_is_read_as_far_as_it_holds(
    repo: Repo, tmp_path: Path, damage: str
) -> None:
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    path.write_bytes(PARTIAL[damage](path.read_bytes()))
    damaged = StoredFileCache(path)
    assert docs(repo, damaged) == expected  # no error
    assert len(StoredFileCache(path)) >= 3  # replaced by a good file (something parsed)


WRONG_SHAPES = {
    "size limit as text": ("UPDATE files SET max_bytes = max_bytes || ' bytes'", ()),
    "size as text": ("UPDATE files SET size = size || ' bytes'", ()),
    "entry as text": ("UPDATE files SET found = CAST(found AS TEXT)", ()),
    "signature as a blob": ("UPDATE files SET signature = CAST(signature AS BLOB)", ()),
    "no files table": ("DROP TABLE files", ()),
    "no signature": ("ALTER TABLE files DROP COLUMN signature", ()),
    "two meta rows": ("INSERT INTO meta SELECT * FROM meta", ()),
    "another format": ("UPDATE meta SET format = format + 1", ()),
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(WRONG_SHAPES))
def test_entries_of_the_wrong_shape_are_ignored(repo: Repo, tmp_path: Path, shape: str) -> None:
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    sql, params = WRONG_SHAPES[shape]
    rewrite(path, sql, *params)
    damaged = StoredFileCache(path)
    assert docs(repo, damaged) == expected
    assert damaged.misses >= 1 and len(StoredFileCache(path)) >= 3


def test_the_key_covers_the_naming_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to any module of the extractor, ``rules/`` included, is another key."""
    copy = tmp_path / "extract"
    shutil.copytree(Path(cache_module.__file__).parent, copy)
    monkeypatch.setattr(cache_module, "__file__", str(copy / "cache.py"))
    before = cache_module._extractor_digest()
    with (copy / "rules" / "base.py").open("a") as fh:
        fh.write("\n# the qualified name joins with '::' now\n")
    assert cache_module._extractor_digest() != before


def test_the_key_covers_tree_sitter_and_the_grammars(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written under other grammar versions is not read: an upgrade of
    tree-sitter-cpp may change what ``Server::Start`` is called."""
    path = cache_path(repo, tmp_path)
    warm(repo, path)
    real = cache_module.metadata.version
    for upgraded in ("tree-sitter", "tree-sitter-cpp"):
        with monkeypatch.context() as mp:
            mp.setattr(
                cache_module.metadata,
                "version",
                lambda name, up=upgraded: "999.0" if name == up else real(name),
            )
            assert len(StoredFileCache(path)) == 0
    assert len(StoredFileCache(path)) >= 3


def packed(data: Any) -> bytes:
    return zlib.compress(json.dumps(data).encode())


def unpacked(found: bytes) -> Any:
    return json.loads(zlib.decompress(found))


def test_a_forged_entry_never_injects_functions(repo: Repo, tmp_path: Path) -> None:
    """An entry of the right format, extractor digest, path, blob id (and size and
    hash of the file) whose functions were written by someone else is not used."""
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    evil = "def steal_credentials():\n    send(os.environ)\n"
    meta = {"language": "python", "path": "src/app.py", "qualname": "steal_credentials"}
    meta |= {"start_line": 1, "end_line": 2}
    found = unpacked(entry(path, "src/app.py")[6])
    found[1] = [["src/app.py:steal_credentials:1", evil, meta]]
    rewrite(path, "UPDATE files SET found = ? WHERE path = ?", packed(found), b"src/app.py")
    got = docs(repo, StoredFileCache(path))
    assert got == expected
    assert not any("steal_credentials" in text for _, text in got)
    assert not any("steal_credentials" in doc_id for doc_id, _ in got)


def test_a_signed_entry_is_used_only_for_the_bytes_it_was_parsed_from(
    repo: Repo, tmp_path: Path
) -> None:
    """A genuine entry moved under another file's path and blob id (signed again with
    the cache's own key) does not match that file's size and hash: parsed again."""
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    secret = (path.parent / ".key").read_bytes()
    app, other = entry(path, "src/app.py"), entry(path, "src/other.py")
    found = unpacked(app[6])
    found[1] = [[f[0].replace("app", "other"), f[1], f[2]] for f in found[1]]
    moved = (*other[:4], *app[4:6], packed(found))
    signature = cache_module._sign(secret, cache_module._extractor_digest(), moved)
    rewrite(path, "DELETE FROM files WHERE path = ?", b"src/other.py")
    rewrite(path, "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)", *moved, signature)
    run = StoredFileCache(path)
    assert docs(repo, run) == expected
    assert run.misses == 1 and run.hits == 2  # src/other.py parsed again


def test_entries_signed_under_another_key_are_not_trusted(repo: Repo, tmp_path: Path) -> None:
    """The key file replaced (another home copied in): nothing stored is trusted."""
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    (path.parent / ".key").write_bytes(os.urandom(32))
    run = StoredFileCache(path)
    assert len(run) == 0 and docs(repo, run) == expected


KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from riido_pg.extract import stored_cache, tree_documents
if sys.argv[3] == "kill":  # SIGKILL at the rename: the temporary file stays
    stored_cache.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
stored = stored_cache.StoredFileCache(Path(sys.argv[2]))
print(len(list(tree_documents(Path(sys.argv[1]), rev="HEAD", cache=stored))))
"""


def run_child(repo: Repo, path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", KILLED_WRITE, str(repo.path), str(path), mode],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )


def test_temporary_files_of_a_killed_write_are_removed(repo: Repo, tmp_path: Path) -> None:
    path = cache_path(repo, tmp_path)
    killed = run_child(repo, path, "kill")
    assert killed.returncode == -signal.SIGKILL
    (left,) = path.parent.glob(".files.*")
    assert not path.exists()
    # beside it: a file of another name, and (as root) one of another owner
    other_name = path.parent / ".files.notours"
    other_name.write_bytes(b"x")
    foreign = path.parent / ".files.abcd1234"
    foreign.write_bytes(b"x")
    if os.geteuid() == 0:
        os.chown(foreign, 12345, 12345)
    else:
        foreign.unlink()
    time.sleep(0.05)  # the next run starts after them
    done = run_child(repo, path, "load")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4"]
    assert not left.exists() and path.is_file()
    assert other_name.exists()
    assert foreign.exists() == (os.geteuid() == 0)


def test_a_temporary_file_being_written_is_kept(repo: Repo, tmp_path: Path) -> None:
    """A writer holds its temporary file locked until it renames it: another run,
    started later, leaves it alone."""
    import fcntl

    path = cache_path(repo, tmp_path)
    path.parent.mkdir(parents=True)
    busy = path.parent / ".files.busy0000"
    with busy.open("wb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        os.utime(busy, (0, 0))
        done = run_child(repo, path, "load")
        assert done.returncode == 0, done.stderr
        assert busy.exists() and path.is_file()


def test_load_at_a_revision_over_a_damaged_cache(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``load --rev`` reads (``open_source``): a cache file damaged in every page,
    or holding a signed entry whose deflate stream is damaged (the JSON format of
    main: ``Error -3 while decompressing data`` at every later load), gives the
    documents, and is replaced."""
    from riido_pg.sources import TreeOptions, open_source

    monkeypatch.setenv("RIIDO_PG_HOME", str(tmp_path / "home"))
    path = cache_path(repo, tmp_path)

    def load() -> list[tuple[str, str]]:
        return [(d.id, d.text) for d in open_source(repo.path, tree=TreeOptions(rev="HEAD"))]

    expected = load()
    path.write_bytes(every_page_flipped(path.read_bytes()))
    assert load() == expected == docs(repo)
    assert len(StoredFileCache(path)) >= 3
    row = entry(path, "src/app.py")
    bad = row[6][:2] + bytes([row[6][2] | 0x06]) + row[6][3:]  # the reserved block type
    secret = (path.parent / ".key").read_bytes()
    signature = cache_module._sign(secret, cache_module._extractor_digest(), (*row[:6], bad))
    sql = "UPDATE files SET found = ?, signature = ? WHERE path = ?"
    rewrite(path, sql, bad, signature, b"src/app.py")
    run = StoredFileCache(path)
    assert [(d.id, d.text) for d in tree_documents(repo.path, rev="HEAD", cache=run)] == expected
    assert run.misses == 1 and len(StoredFileCache(path)) >= 3


def peak_bytes(repo: Repo, path: Path | None) -> tuple[int, Any]:
    """The Python heap's peak over a walk of HEAD (documents not kept) through a
    stored cache at ``path`` opened in it (None: no cache), and the cache."""
    tracemalloc.start()
    try:
        cache = None if path is None else StoredFileCache(path)
        for _ in tree_documents(repo.path, rev="HEAD", cache=cache):
            pass
        return tracemalloc.get_traced_memory()[1], cache
    finally:
        tracemalloc.stop()


def test_the_stored_cache_holds_no_tree_in_memory(tmp_path: Path) -> None:
    """Memory does not grow with the tree: a walk through the stored cache, cold
    (writing it) or warm (reading it), peaks within 1 MiB of the same walk without
    one, on 3,000 files of 3 functions (main: 14 MiB more cold; warm, it asked gzip
    for a 1 GiB read of the whole file)."""
    repo = Repo(tmp_path / "repo")
    body = "def handler_{n}_{i}(request, value):\n    return value + {i} * {n}\n\n"
    for n in range(3000):
        repo.write(f"pkg{n // 100}/mod{n}.py", "".join(body.format(n=n, i=i) for i in range(3)))
    repo.commit("many files")
    path = cache_path(repo, tmp_path)
    docs(repo)  # the parsers loaded before anything is measured
    bare, _ = peak_bytes(repo, None)
    cold_peak, cold = peak_bytes(repo, path)
    warm_peak, warm = peak_bytes(repo, path)
    assert (cold.misses, warm.hits, warm.misses) == (3000, 3000, 0)
    assert cold_peak - bare < 1 << 20 and warm_peak - bare < 1 << 20
