"""A git revision as a source: ``iter_functions(DIR, rev=REV)`` reads the tree of REV
from the repository and gives exactly what extracting a clean checkout of REV gives.

No database is needed: every test builds a small repository with ``git`` in tmp_path.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.gitrepos import Repo, git_env

from riido_pg.cli.errors import exit_code
from riido_pg.errors import InvalidInput
from riido_pg.extract import ExtractStats, FileCache, Function, iter_functions
from riido_pg.extract.functions import FileFunctions
from riido_pg.extract.git import GitNotFound, NotARepository, PartialClone, UnknownRevision
from riido_pg.extract.gittree import parse_tree
from riido_pg.extract.walk import Item

PY = "def {name}(x):\n    return x + 1\n"


def extract(root: Path, **kwargs: Any) -> tuple[list[Function], ExtractStats]:
    stats = ExtractStats()
    return list(iter_functions(root, stats=stats, **kwargs)), stats


def counters(stats: ExtractStats) -> dict[str, Any]:
    """Every counter and the problems, without the submodules a revision counts (a
    checkout has an empty directory there, which the directory walk just enters)."""
    fields = dataclasses.asdict(stats)
    del fields["skipped_submodules"]
    return fields


def same_as_checkout(repo: Repo, rev: str, root: Path | None = None, **kwargs: Any) -> Any:
    """Extract ``rev`` from the repository, then from a clean checkout of it, and
    check they are the same documents and counts; returns the revision's stats."""
    where = root if root is not None else repo.path
    from_rev, rev_stats = extract(where, rev=rev, **kwargs)
    repo.checkout(rev)
    from_dir, dir_stats = extract(where, **kwargs)
    assert from_rev == from_dir
    assert counters(rev_stats) == counters(dir_stats)
    assert from_rev, "the test tree should hold functions"
    return rev_stats


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """Two commits exercising every rule of the walk."""
    r = Repo(tmp_path / "repo")
    r.write("src/app.py", PY.format(name="run") + "\n\n" + PY.format(name="stop"))
    r.write("src/util.go", "package util\n\nfunc Add(a, b int) int { return a + b }\n")
    r.write("src/ignored_by_root.py", PY.format(name="ignored"))
    r.write(".gitignore", "ignored_by_root.py\n*.gen.py\n!keep.gen.py\n")
    r.write("lib/.ignore", "secret/\n")
    r.write("lib/secret/s.py", PY.format(name="hidden"))
    r.write("lib/keep.gen.py", PY.format(name="kept"))
    r.write("lib/drop.gen.py", PY.format(name="dropped"))
    r.write("lib/deep/.gitignore", "!drop.gen.py\n")
    r.write("lib/deep/drop.gen.py", PY.format(name="reincluded"))
    r.write("node_modules/m/index.js", "function vendored() {}\n")
    r.write("web/app.min.js", "function minified() {}\n")
    r.write("web/app.js", "function shown() { return 1 }\n")
    r.write("bin/blob.py", b"def f():\n    return 1\n\x00\x01")
    r.write("legacy/latin.py", "def café():\n    return 1\n".encode("latin-1"))
    r.write("bom.py", b"\xef\xbb\xbf" + PY.format(name="bom").encode())
    r.write("big.py", PY.format(name="big") + "#" * 3000 + "\n")
    r.write(b"raw\xffname.py", PY.format(name="rawname"))
    r.write("docs/README.md", "# not code\n")
    r.write("crlf.py", "def crlf(x):\r\n    return x\r\n")
    os.symlink("src/app.py", r.path / "link.py")
    os.symlink("../src", r.path / "lib" / "linkdir")
    r.write("odd/a.py", PY.format(name="odd"))
    r.write("odd/.ignore/readme.txt", "an ignore file that is a directory\n")
    os.symlink("../.gitignore", r.path / "odd" / ".gitignore")  # a link: not read
    r.git("add", "-A", "-f")
    r.gitlink("vendored_sub")
    r.gitlink("sub")
    r.first = r.commit("first", add=False)  # type: ignore[attr-defined]
    r.git("mv", "src/app.py", "src/main.py")
    r.write("src/main.py", PY.format(name="run") + "\n\n" + PY.format(name="halt"))
    r.write(".gitignore", "*.gen.py\n")
    r.remove("web/app.js")
    r.write("sub2/x.rs", "fn rusty() -> u8 { 1 }\n")
    r.git("add", "-A", "-f")
    r.second = r.commit("second", add=False)  # type: ignore[attr-defined]
    return r


def test_each_revision_is_its_clean_checkout(repo: Repo) -> None:
    first, second = repo.first, repo.second  # type: ignore[attr-defined]
    stats = same_as_checkout(repo, first, max_file_bytes=2000)
    assert stats.skipped_binary == 1 and stats.skipped_undecodable == 2
    assert stats.skipped_too_large == 1 and stats.skipped_symlinks == 3
    assert stats.skipped_vendored == 2  # node_modules/, app.min.js
    assert stats.skipped_submodules == 2  # sub, vendored_sub (not a vendored name)
    assert "2 submodules not read" in stats.describe()
    assert not any("submodule" in reason for _, reason in stats.problems)
    assert ("odd/.gitignore", "ignore file not read: too many levels of symbolic links") in (
        stats.problems
    )
    assert ("odd/.ignore", "ignore file not read: is a directory") in stats.problems
    same_as_checkout(repo, second, max_file_bytes=2000)
    ids = {f.id for f in extract(repo.path, rev=first)[0]}
    assert "src/app.py:stop:5" in ids and "src/ignored_by_root.py:ignored:1" not in ids
    assert "lib/deep/drop.gen.py:reincluded:1" in ids and "lib/drop.gen.py:dropped:1" not in ids
    later = {f.id for f in extract(repo.path, rev=second)[0]}
    assert "src/main.py:halt:5" in later and "src/app.py:run:1" not in later
    assert "src/ignored_by_root.py:ignored:1" in later  # no longer ignored at this revision
    assert "lib/keep.gen.py:kept:1" not in later  # its re-include is gone


def test_a_file_cache_changes_nothing_but_what_is_parsed(repo: Repo) -> None:
    """One FileCache over several revisions (and limits): the same functions, counts
    and problems as without it; an unchanged file is parsed once; a directory on disk
    never uses it."""
    first, second = repo.first, repo.second  # type: ignore[attr-defined]
    cache = FileCache()
    misses = []
    for rev, limit in ((first, 2000), (second, 2000), (first, 2000), (first, 100_000)):
        alone = extract(repo.path, rev=rev, max_file_bytes=limit)
        cached = extract(repo.path, rev=rev, max_file_bytes=limit, cache=cache)
        assert cached[0] == alone[0]
        assert dataclasses.asdict(cached[1]) == dataclasses.asdict(alone[1])
        misses.append(cache.misses)
    parsed = [b - a for a, b in zip([0, *misses], misses, strict=False)]
    # the second revision reads what changed (src/main.py, sub2/x.rs, and the file its
    # .gitignore no longer ignores), the first again nothing, a larger limit all again
    assert parsed[0] > 6 and parsed[1] == 3 and parsed[2] == 0 and parsed[3] == parsed[0]
    repo.checkout(second)
    held = len(cache)
    assert extract(repo.path, cache=cache)[0] == extract(repo.path)[0]
    assert len(cache) == held


def test_a_full_file_cache_forgets_the_oldest() -> None:
    cache = FileCache(max_files=2)
    found = FileFunctions()
    for name in ("a", "b", "c"):
        cache.put((name, "0" * 40, "python", 1), found)
    assert ("a", "0" * 40, "python", 1) not in cache and len(cache) == 2
    assert cache.get(("c", "0" * 40, "python", 1)) is found and cache.hits == 1
    with pytest.raises(ValueError):
        FileCache(max_files=0)


def test_options_apply_as_to_a_directory(repo: Repo) -> None:
    first = repo.first  # type: ignore[attr-defined]
    same_as_checkout(repo, first, langs=["go", "javascript"])
    same_as_checkout(repo, first, excludes=["src/", "!src/util.go"])
    same_as_checkout(repo, first, include_vendored=True)
    functions, _ = extract(repo.path, rev=first, include_vendored=True)
    assert {"node_modules/m/index.js:vendored:1", "web/app.min.js:minified:1"} <= {
        f.id for f in functions
    }


def test_tests_and_excludes_are_left_out_as_in_a_directory(repo: Repo) -> None:
    repo.write("tests/test_app.py", PY.format(name="checks"))
    repo.write("src/main_test.go", "package src\n\nfunc TestMain() {}\n")
    repo.write("src/spec/helper.js", "function helps() {}\n")
    repo.write("src/util_test.txt", "not code\n")
    repo.git("add", "-A", "-f")
    repo.gitlink("lib/tests")  # a submodule where a test directory would be
    third = repo.commit("tests", add=False)
    everything = same_as_checkout(repo, third)
    assert everything.test_functions == 3
    stats = same_as_checkout(repo, third, no_tests=True)
    assert (stats.functions, stats.test_functions) == (everything.functions - 3, 0)
    # the four test files (three of them code, holding the three functions), read only
    # to be counted; lib/tests is a submodule, counted as one
    assert (stats.tests.entries, stats.tests.dirs, stats.tests.code) == (4, 0, 3)
    assert stats.test_functions_left_out == 3
    assert (everything.skipped_submodules, stats.skipped_submodules) == (1, 1)
    both = same_as_checkout(repo, third, no_tests=True, excludes=["src/", "tests/test_*.py"])
    # the excludes come first: src/ and tests/test_app.py, so no test file is left to count
    assert (both.excluded.entries, both.excluded.dirs, both.excluded.code) == (2, 1, 1)
    assert (both.tests.entries, both.test_functions_left_out) == (0, 0)
    only = same_as_checkout(repo, third, excludes=["tests/test_*.py", "sub2/"])
    assert (only.excluded.entries, only.excluded.dirs, only.excluded.code) == (2, 1, 1)


def test_a_subdirectory_is_that_subtree(repo: Repo) -> None:
    first = repo.first  # type: ignore[attr-defined]
    stats = same_as_checkout(repo, first, root=repo.path / "lib")
    ids = [f.id for f in extract(repo.path / "lib", rev=first)[0]]
    # the root's .gitignore is above it, so not read (as for the directory on disk);
    # lib/.ignore still hides secret/
    assert ids == ["deep/drop.gen.py:reincluded:1", "drop.gen.py:dropped:1", "keep.gen.py:kept:1"]
    assert stats.skipped_symlinks == 1


def test_info_exclude_applies_at_the_top_only(repo: Repo) -> None:
    first = repo.first  # type: ignore[attr-defined]
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("util.go\n!ignored_by_root.py\n")
    ids = {f.id for f in same_as_checkout(repo, first) and extract(repo.path, rev=first)[0]}
    assert "src/util.go:Add:3" not in ids
    assert "src/ignored_by_root.py:ignored:1" not in ids  # a .gitignore wins over it
    sub = {f.id for f in extract(repo.path / "src", rev=first)[0]}
    assert "util.go:Add:3" in sub


def test_a_linked_work_tree_reads_its_repositorys_excludes(repo: Repo, tmp_path: Path) -> None:
    first = repo.first  # type: ignore[attr-defined]
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("util.go\n")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked), first)
    from_dir, dir_stats = extract(linked)  # its .git is a file naming the repository
    from_rev, rev_stats = extract(linked, rev=first)
    assert from_dir == from_rev and counters(dir_stats) == counters(rev_stats)
    assert "src/util.go:Add:3" not in {f.id for f in from_dir}
    assert not any(path.startswith(".git") for path, _ in dir_stats.problems)


def test_a_bare_repository_and_its_git_directory(repo: Repo, tmp_path: Path) -> None:
    first, second = repo.first, repo.second  # type: ignore[attr-defined]
    bare = tmp_path / "bare.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(bare)],
        env=git_env(tmp_path),
        check=True,
    )
    for rev in (first, second, "main", "HEAD~1"):
        assert extract(bare, rev=rev) == extract(repo.path, rev=rev)
        assert extract(repo.path / ".git", rev=rev) == extract(repo.path, rev=rev)


def test_output_is_byte_identical_and_sorted(repo: Repo) -> None:
    second = repo.second  # type: ignore[attr-defined]
    a = [f.to_json_line() for f in extract(repo.path, rev=second)[0]]
    b = [f.to_json_line() for f in extract(repo.path, rev=second)[0]]
    assert a == b
    paths = [line.split('"path":"', 1)[1].split('"', 1)[0] for line in a]
    assert paths == sorted(paths, key=lambda p: p.encode())


def test_the_work_tree_is_not_read(repo: Repo) -> None:
    first = repo.first  # type: ignore[attr-defined]
    before = extract(repo.path, rev=first)
    repo.write("src/app.py", PY.format(name="uncommitted"))
    repo.write("untracked.py", PY.format(name="untracked"))
    assert extract(repo.path, rev=first) == before


def test_the_generator_can_stop_early(repo: Repo) -> None:
    functions = iter_functions(repo.path, rev=repo.second)  # type: ignore[attr-defined]
    assert next(functions).id
    functions.close()  # the reader process is stopped, nothing hangs


# --- errors -----------------------------------------------------------------


def test_bad_revisions(repo: Repo) -> None:
    for rev in ("nope", "", "-x", "main~99", "HEAD:src", "a\nb"):
        with pytest.raises(UnknownRevision):
            iter_functions(repo.path, rev=rev)
    blob = repo.git("rev-parse", "HEAD:src/main.py")
    with pytest.raises(UnknownRevision, match="no commit named"):
        iter_functions(repo.path, rev=blob)


def test_not_a_repository(tmp_path: Path, repo: Repo) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepository, match="not a git repository"):
        iter_functions(tmp_path / "plain", rev="HEAD")
    with pytest.raises(NotARepository, match="inside the git directory"):
        iter_functions(repo.path / ".git" / "objects", rev="HEAD")
    with pytest.raises(InvalidInput, match="no such directory"):
        iter_functions(tmp_path / "missing", rev="HEAD")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="not a directory"):
        iter_functions(tmp_path / "file", rev="HEAD")


def test_a_directory_missing_at_that_revision(repo: Repo) -> None:
    first = repo.first  # type: ignore[attr-defined]
    repo.checkout(repo.second)  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput, match="sub2: no such directory at revision"):
        iter_functions(repo.path / "sub2", rev=first)
    (repo.path / "src" / "main.py").unlink()
    (repo.path / "src" / "main.py").mkdir()
    with pytest.raises(InvalidInput, match="not a directory at revision"):
        iter_functions(repo.path / "src" / "main.py", rev=repo.second)  # type: ignore[attr-defined]


def test_no_git_on_path(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(repo.path / "nowhere"))
    with pytest.raises(GitNotFound) as caught:
        iter_functions(repo.path, rev="HEAD")
    assert exit_code(caught.value) == 1


def test_a_partial_clone_is_refused(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:none", f"file://{repo.path}", str(clone)],
        env=git_env(tmp_path),
        check=True,
    )
    with pytest.raises(PartialClone, match="never fetches"):
        iter_functions(clone, rev="HEAD~1")


def test_variables_pointing_elsewhere_are_ignored(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = Repo(tmp_path / "other")
    other.write("o.py", PY.format(name="other"))
    other.commit("other")
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    assert "src/main.py:halt:5" in {f.id for f in extract(repo.path, rev="HEAD")[0]}


# --- tree objects -----------------------------------------------------------

_MODES = {"dir": b"40000", "file": b"100644", "link": b"120000", "submodule": b"160000"}
names = st.text(
    st.characters(blacklist_characters="/\0", codec="utf-8"), min_size=1, max_size=8
).filter(lambda n: n not in (".", ".."))


@given(
    st.lists(
        st.tuples(names, st.sampled_from(sorted(_MODES)), st.binary(min_size=20, max_size=20)),
        max_size=8,
    )
)
def test_parse_tree_reads_every_entry(entries: list[tuple[str, Any, bytes]]) -> None:
    raw = b"".join(_MODES[k] + b" " + n.encode() + b"\0" + oid for n, k, oid in entries)
    assert parse_tree(raw, 20) == [Item(n, k, oid.hex()) for n, k, oid in entries]


@given(names, st.sampled_from(["", ".", "..", "a/b", "/", "x/"]))
def test_parse_tree_refuses_a_name_no_checkout_writes(good: str, bad: str) -> None:
    oid = b"\x01" * 20
    for order in ((good, bad), (bad, good)):
        raw = b"".join(b"100644 " + n.encode() + b"\0" + oid for n in order)
        with pytest.raises(ValueError, match="malformed tree entry"):
            parse_tree(raw, 20)


def test_parse_tree_refuses_a_truncated_object() -> None:
    with pytest.raises(ValueError):
        parse_tree(b"100644 a\0" + b"x" * 19, 20)


def test_a_stored_file_cache_carries_parses_to_the_next_run(repo: Repo, tmp_path: Path) -> None:
    """What one run parsed at a revision is read back by the next (another process,
    in `load REPO --rev` loops): the same documents, only the changed files parsed; a
    damaged file or one of other extraction rules is ignored and replaced."""
    from riido_pg.extract import stored_cache as cache_module
    from riido_pg.extract import tree_documents
    from riido_pg.extract.stored_cache import StoredFileCache, stored_cache_path

    first, second = repo.first, repo.second  # type: ignore[attr-defined]
    path = stored_cache_path(tmp_path / "home", repo.path / ".git")

    def docs(rev: str, cache: Any = None) -> list[tuple[str, str]]:
        return [(d.id, d.text) for d in tree_documents(repo.path, rev=rev, cache=cache)]

    run = StoredFileCache(path)
    assert len(run) == 0 and docs(first, run) == docs(first)
    assert path.is_file() and run.misses > 6
    run = StoredFileCache(path)  # the next process
    assert len(run) > 6 and docs(second, run) == docs(second)
    assert run.misses == 3  # src/main.py, sub2/x.rs, the file no longer ignored
    again = StoredFileCache(path)  # nothing new parsed: the file is left as it is
    stamp = path.stat().st_mtime_ns
    assert docs(second, again) == docs(second) and again.misses == 0
    assert path.stat().st_mtime_ns == stamp
    path.write_bytes(b"SQLite format 3\0 not sqlite at all")
    damaged = StoredFileCache(path)
    assert len(damaged) == 0 and docs(first, damaged) == docs(first)
    assert len(StoredFileCache(path)) > 6  # replaced by a good one
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache_module, "_extractor_digest", lambda: "other rules")
        assert len(StoredFileCache(path)) == 0


def test_load_at_a_revision_keeps_its_file_cache_under_the_home(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from riido_pg.extract.stored_cache import stored_cache_path
    from riido_pg.sources import TreeOptions, open_source

    monkeypatch.setenv("RIIDO_PG_HOME", str(tmp_path / "home"))
    first = repo.first  # type: ignore[attr-defined]
    got = [(d.id, d.text) for d in open_source(repo.path, tree=TreeOptions(rev=first))]
    assert got == [(f.id, f.text) for f in extract(repo.path, rev=first)[0]]
    assert stored_cache_path(tmp_path / "home", repo.path / ".git").is_file()
