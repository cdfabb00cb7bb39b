"""The parse cache ``load --rev`` keeps between runs (``StoredFileCache``): damage of
any kind, other extraction rules or grammars, forged entries and a write killed
half-way never change the documents and never fail the run.

No database is needed: a small repository is built with ``git`` in tmp_path.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.gitrepos import Repo

from riido_pg.extract import cache as cache_module
from riido_pg.extract import tree_documents
from riido_pg.extract.cache import StoredFileCache, stored_cache_path

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


def rewrite(path: Path, edit: Any) -> None:
    """The stored file, decoded, changed by ``edit`` and written back (valid gzip)."""
    body = json.loads(gzip.decompress(path.read_bytes()))
    edit(body)
    path.write_bytes(gzip.compress(json.dumps(body).encode()))


def wrong_types(body: dict[str, Any]) -> None:
    for entry in body["files"]:
        entry[3] = str(entry[3])  # the size limit as a string


def entry_too_short(body: dict[str, Any]) -> None:
    body["files"][0] = body["files"][0][:2]


def files_not_a_list(body: dict[str, Any]) -> None:
    body["files"] = {"a": 1}


def flip(raw: bytes) -> bytes:
    middle = len(raw) // 2
    return raw[:middle] + bytes([raw[middle] ^ 0x55]) + raw[middle + 1 :]


def bad_block_type(raw: bytes) -> bytes:
    """The first deflate block's type made the reserved one (zlib: error -3)."""
    return raw[:10] + bytes([raw[10] | 0x06]) + raw[11:]


DAMAGE = {
    "flipped byte": flip,
    "bad block type": bad_block_type,
    "truncated": lambda raw: raw[: len(raw) - 9],
    "empty": lambda raw: b"",
    "not gzip": lambda raw: b"\x1f\x8b not gzip at all",
    "gzipped []": lambda raw: gzip.compress(b"[]"),
    'gzipped "x"': lambda raw: gzip.compress(b'"x"'),
    "gzipped null": lambda raw: gzip.compress(b"null"),
    "deeply nested": lambda raw: gzip.compress(nested(200_000)),
    "huge integer": lambda raw: gzip.compress(b'{"format":' + b"9" * 5000 + b"}"),
    "not utf-8": lambda raw: gzip.compress(b'{"format": "\xff"}'),
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


@pytest.mark.parametrize("edit", [wrong_types, entry_too_short, files_not_a_list])
def test_entries_of_the_wrong_shape_are_ignored(repo: Repo, tmp_path: Path, edit: Any) -> None:
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    rewrite(path, edit)
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


def forge(entry: list[Any], functions: list[Any]) -> None:
    """Put ``functions`` in place of the entry's, every other field as it was."""
    found = next(part for part in entry if isinstance(part, list) and part[:1] == ["functions"])
    found[1] = functions


def test_a_forged_entry_never_injects_functions(repo: Repo, tmp_path: Path) -> None:
    """An entry of the right format, extractor digest, path, blob id (and size and
    hash of the file) whose functions were written by someone else is not used."""
    path = cache_path(repo, tmp_path)
    expected = warm(repo, path)
    evil = "def steal_credentials():\n    send(os.environ)\n"
    meta = {"language": "python", "path": "src/app.py", "qualname": "steal_credentials"}
    meta |= {"start_line": 1, "end_line": 2}

    def edit(body: dict[str, Any]) -> None:
        for entry in body["files"]:
            if entry[0] == "src/app.py":
                forge(entry, [["src/app.py:steal_credentials:1", evil, meta]])

    rewrite(path, edit)
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

    def edit(body: dict[str, Any]) -> None:
        by_path = {entry[0]: entry for entry in body["files"]}
        app, other = by_path["src/app.py"], by_path["src/other.py"]
        moved = [*other[:4], *copy.deepcopy(app[4:7])]
        moved[6][1] = [[f[0].replace("app", "other"), f[1], f[2]] for f in moved[6][1]]
        body["files"] = [e for e in body["files"] if e is not other]
        body["files"].append([*moved, cache_module._sign(secret, moved)])

    rewrite(path, edit)
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
from riido_pg.extract import cache, tree_documents
if sys.argv[3] == "kill":  # SIGKILL at the rename: the temporary file stays
    cache.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
stored = cache.StoredFileCache(Path(sys.argv[2]))
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
    """What ``load --rev`` reads (``open_source``): a cache file whose deflate stream is
    damaged (main: ``Error -3 while decompressing data`` at every later load) gives the
    documents, and is replaced."""
    from riido_pg.sources import TreeOptions, open_source

    monkeypatch.setenv("RIIDO_PG_HOME", str(tmp_path / "home"))
    path = cache_path(repo, tmp_path)

    def load() -> list[tuple[str, str]]:
        return [(d.id, d.text) for d in open_source(repo.path, tree=TreeOptions(rev="HEAD"))]

    expected = load()
    path.write_bytes(bad_block_type(path.read_bytes()))
    assert load() == expected == docs(repo)
    assert len(StoredFileCache(path)) >= 3
