"""``corpus history``'s library: questions, targets, skips, the directory, reading it.

A repository with a designed history is built once with ``git``; each commit is one
case of the rules (README "Evaluation"). No database is needed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.gitrepos import Repo, git_env

from riido_pg.corpora.history import (
    MANIFEST_FILE,
    HistoryOptions,
    build,
    is_history_corpus,
    read_history_corpus,
    snapshot_documents,
)
from riido_pg.corpora.history.output import written_corpus
from riido_pg.corpora.history.paths import is_test_or_doc
from riido_pg.corpora.history.subjects import RULES_VERSION, clean_subject, judge_subject
from riido_pg.documents import MAX_QUERY_BYTES
from riido_pg.errors import InvalidCorpus, InvalidInput, OutputError
from riido_pg.extract import Function, is_doc_or_example_path, is_test_path, iter_functions
from riido_pg.extract.git import NotARepository, UnknownRevision
from riido_pg.extract.spans import Span, innermost

APP = """import os


def parse(text):
    \"\"\"Parse the config.\"\"\"
    return text.split()


def outer(x):
    def inner(y):
        return y * 2

    return inner(x)


class Store:
    # Keep values.
    def get(self, key):
        return key

    def put(self, key, value):
        return value


def tail():
    return 0
"""
RUST = """fn real() -> u8 {
    1
}

#[cfg(test)]
mod tests {
    fn it() {
        assert_eq!(super::real(), 1);
    }
}
"""


def edit(repo: Repo, rel: str, old: str, new: str) -> None:
    path = repo.path / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The repository and its commits by name."""
    r = Repo(tmp_path_factory.mktemp("history") / "proj")
    c: dict[str, Any] = {"repo": r}
    r.write("src/app.py", APP)
    r.write("src/lib.rs", RUST)
    r.write("tests/test_app.py", "def test_parse():\n    assert True\n")
    r.write("docs/conf.py", "def setup(app):\n    return app\n")
    r.write("legacy.py", "def café():\n    return 1\n".encode("latin-1"))
    r.write("logo.png", b"\x89PNG\x00\x01")
    c["root"] = r.commit("Initial import of the config tools")
    edit(r, "src/app.py", "return text.split()", "return text.split('=')")
    c["parse"] = r.commit("Parse quoted values in config files (#12)")
    edit(r, "src/app.py", "return 0", "return 0  # 1.1")
    c["bump"] = r.commit("Bump version to 1.1")
    edit(r, "src/app.py", "return y * 2", "return y * 3")
    c["inner"] = r.commit("Fixes #7 -- Triple values inside the inner helper")
    edit(r, "src/app.py", "# Keep values.", "# Keep values by key.")
    c["comment"] = r.commit("Document how keys are stored in Store")
    edit(r, "src/app.py", "\n\ndef outer", "\n\nHELPER = 1\n\n\ndef outer")
    c["between"] = r.commit("Add a constant between parse and outer")
    edit(r, "src/app.py", "def get(self, key):\n", "def get(self, key):\n        print(key)\n")
    c["insert"] = r.commit("Log every lookup done by get")
    edit(r, "tests/test_app.py", "assert True", "assert parse('a') == ['a']")
    edit(r, "docs/conf.py", "return app", "return None")
    c["tests"] = r.commit("Cover parsing with more tests and docs")
    r.git("mv", "src/app.py", "src/core.py")
    edit(r, "src/core.py", "return 0  # 1.1", "return -1")
    c["rename"] = r.commit("Rename the app module and make tail negative")
    for old, new in [
        ("split('=')", "split(':')"),
        ("y * 3", "y * 4"),
        ("return key", "return str(key)"),
        ("return value", "return str(value)"),
        ("return -1", "return -2"),
    ]:
        edit(r, "src/core.py", old, new)
    c["many"] = r.commit("Change every function of the store and more")
    r.git("checkout", "-q", "-b", "side")
    edit(r, "src/core.py", '"""Parse the config."""', '"""Parse a config text."""')
    c["side"] = r.commit("Describe what parse takes on a branch")
    r.git("checkout", "-q", "main")
    edit(r, "src/lib.rs", "fn real() -> u8 {\n    1", "fn real() -> u8 {\n    2")
    c["main_after_side"] = r.commit("Return two from the real rust helper")
    r.ticks += 1
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
    c["merge"] = r.git("rev-parse", "HEAD")
    r.write("legacy.py", "def café():\n    return 2\n".encode("latin-1"))
    r.write("logo.png", b"\x89PNG\x00\x02")
    c["binary"] = r.commit("Update the logo and the legacy module")
    edit(r, "src/lib.rs", "assert_eq!(super::real(), 1)", "assert_eq!(super::real(), 2)")
    c["rusttest"] = r.commit("Fix the expectation of the rust test module")
    edit(r, "src/core.py", "return -2", "return -3")
    c["typo"] = r.commit("fix: typo in tail")
    edit(r, "src/core.py", "return -3", "return 1")
    c["last"] = r.commit("Make tail return one again [skip ci]")
    return c


def at(repo: Repo, rev: str, path: str, qualname: str) -> str:
    """The id of a function in the tree of ``rev``."""
    ids = [f.id for f in iter_functions(repo.path, rev=rev) if f.metadata["qualname"] == qualname]
    matches = [i for i in ids if i.startswith(path + ":")]
    assert len(matches) == 1, (rev, path, qualname, ids)
    return matches[0]


def built(history: dict[str, Any], out: Path, **options: Any) -> Any:
    repo: Repo = history["repo"]
    stats = build(repo.path, out, HistoryOptions(**options))
    return stats, read_history_corpus(out)


def test_questions_targets_and_skips(history: dict[str, Any], tmp_path: Path) -> None:
    repo: Repo = history["repo"]
    stats, corpus = built(history, tmp_path / "c")
    parent = {q.commit: q.parent for q in corpus.questions}
    got = {q.commit: (q.text, q.targets) for q in corpus.questions}
    c = history

    def target(name: str, path: str, qualname: str) -> str:
        return at(repo, parent[c[name]], path, qualname)

    assert got == {
        c["last"]: ("Make tail return one again", (target("last", "src/core.py", "tail"),)),
        c["main_after_side"]: (
            "Return two from the real rust helper",
            (target("main_after_side", "src/lib.rs", "real"),),
        ),
        c["side"]: (
            "Describe what parse takes on a branch",
            (target("side", "src/core.py", "parse"),),
        ),
        c["rename"]: (  # the target is on the old path, in the parent's tree
            "Rename the app module and make tail negative",
            (target("rename", "src/app.py", "tail"),),
        ),
        c["insert"]: (
            "Log every lookup done by get",
            (target("insert", "src/app.py", "Store.get"),),
        ),
        c["comment"]: (
            "Document how keys are stored in Store",
            (target("comment", "src/app.py", "Store.get"),),
        ),
        c["inner"]: (  # the innermost function only
            "Triple values inside the inner helper",
            (target("inner", "src/app.py", "outer.inner"),),
        ),
        c["parse"]: (
            "Parse quoted values in config files",
            (target("parse", "src/app.py", "parse"),),
        ),
    }
    assert (
        dict(stats.skipped)
        == corpus.skipped
        == {
            "merge": 1,
            "no_target": 4,  # between, tests (test and docs code), binary, rusttest
            "release": 1,
            "root_commit": 1,
            "too_many_targets": 1,
            "typo": 1,
        }
    )
    assert stats.commits == len(corpus.questions) + sum(corpus.skipped.values()) == 17
    log = repo.git("log", "--format=%H").split()
    assert [q.commit for q in corpus.questions] == [h for h in log if h in got]


def test_every_target_is_a_document_of_its_snapshot(
    history: dict[str, Any], tmp_path: Path
) -> None:
    _, corpus = built(history, tmp_path / "c")
    assert list(corpus.snapshots) == list(dict.fromkeys(q.snapshot_id for q in corpus.questions))
    for snapshot_id, commit in corpus.snapshots.items():
        assert snapshot_id == f"proj@{commit[:12]}"
        ids = {d.id for d in snapshot_documents(corpus, snapshot_id)}
        loaded = {f.id for f in iter_functions(history["repo"].path, rev=commit)}
        assert ids == loaded  # exactly what load --rev gives
        for question in corpus.questions_of(snapshot_id):
            assert set(question.targets) <= ids


def test_same_arguments_give_the_same_bytes(history: dict[str, Any], tmp_path: Path) -> None:
    for name in ("a", "b"):
        built(history, tmp_path / name, max_questions=5)
    for rel in (MANIFEST_FILE, "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    manifest = json.loads((tmp_path / "a" / MANIFEST_FILE).read_text())
    assert manifest["repository"] == {"name": "proj", "path": str(history["repo"].path)}
    assert manifest["counts"]["questions"] == 5
    assert manifest["rules_version"] == RULES_VERSION == 4
    assert manifest["range"]["until"] == "HEAD"
    assert (tmp_path / "a" / MANIFEST_FILE).read_text() == json.dumps(
        manifest, sort_keys=True, ensure_ascii=False, indent=2
    ) + "\n"


def test_max_since_and_until(history: dict[str, Any], tmp_path: Path) -> None:
    c = history
    stats, corpus = built(history, tmp_path / "two", max_questions=2)
    assert [q.commit for q in corpus.questions] == [c["last"], c["main_after_side"]]
    assert stats.commits == 6  # it stops as soon as it has two
    _, ranged = built(history, tmp_path / "r", since=c["inner"], until=c["rename"])
    assert [q.commit for q in ranged.questions] == [c["rename"], c["insert"], c["comment"]]
    assert ranged.manifest["range"] == {
        "since": c["inner"],
        "since_commit": c["inner"],
        "until": c["rename"],
        "until_commit": c["rename"],
    }


def test_lang_and_exclude_name_other_snapshots(history: dict[str, Any], tmp_path: Path) -> None:
    _, rust = built(history, tmp_path / "rust", langs=["rust"], name="p2")
    assert [q.commit for q in rust.questions] == [history["main_after_side"]]
    digest = rust.extraction.digest
    assert digest is not None and len(digest) == 8
    assert list(rust.snapshots) == [f"p2@{rust.questions[0].parent[:12]}-{digest}"]
    assert rust.questions[0].id == f"q-p2-{history['main_after_side'][:12]}"
    _, excluded = built(history, tmp_path / "x", excludes=["*.rs"])
    assert history["main_after_side"] not in {q.commit for q in excluded.questions}
    assert excluded.extraction.digest not in (None, digest)
    for sid in excluded.snapshots:
        assert not any(d.id.startswith("src/lib.rs") for d in snapshot_documents(excluded, sid))


def test_a_shallow_clone_counts_its_boundary(history: dict[str, Any], tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "3", f"file://{history['repo'].path}", str(clone)],
        env=git_env(tmp_path),
        check=True,
    )
    stats = build(clone, tmp_path / "c", HistoryOptions())
    assert stats.skipped["shallow"] == 1 and "root_commit" not in stats.skipped
    assert stats.commits == stats.questions + sum(stats.skipped.values())


def test_missing_objects_are_a_skip(history: dict[str, Any], tmp_path: Path) -> None:
    clone = tmp_path / "damaged"
    env = git_env(tmp_path)

    def git(*args: str, data: bytes | None = None) -> str:
        out = subprocess.run(
            ["git", "-C", str(clone), *args], input=data, env=env, check=True, capture_output=True
        )
        return out.stdout.decode().strip()

    subprocess.run(
        ["git", "clone", "-q", "--no-local", str(history["repo"].path), str(clone)],
        env=env,
        check=True,
    )
    pack = next((clone / ".git" / "objects" / "pack").glob("*.pack"))  # make it loose
    data = pack.read_bytes()
    for packed in pack.parent.iterdir():
        packed.unlink()
    git("unpack-objects", "-q", data=data)
    blob = git("rev-parse", f"{history['root']}:src/app.py")
    (clone / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    stats = build(clone, tmp_path / "c", HistoryOptions())
    assert stats.skipped["missing_objects"] == 1
    assert stats.questions == 7


def test_nothing_qualifies(history: dict[str, Any], tmp_path: Path) -> None:
    c = history
    options = HistoryOptions(until=c["bump"], since=c["parse"])
    message = r"no qualifying commit: 0 questions from 1 commit \(skipped: 1 release\)$"
    with pytest.raises(InvalidInput, match=message):
        build(history["repo"].path, tmp_path / "c", options)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"until": "nope"}, UnknownRevision, "no commit named 'nope'"),
        ({"since": "v9"}, UnknownRevision, "no commit named 'v9'"),
        ({"max_questions": 0}, InvalidInput, "--max must be at least 1"),
        ({"max_targets": 0}, InvalidInput, "--max-targets must be at least 1"),
        ({"langs": ["cobol"]}, InvalidInput, "unknown language cobol"),
        ({"excludes": ["ok/", "a\\"]}, InvalidInput, "invalid exclude pattern"),
        ({"name": "a b"}, InvalidInput, "--name 'a b'"),
    ],
)
def test_bad_options(
    history: dict[str, Any], tmp_path: Path, options: dict[str, Any], error: Any, message: str
) -> None:
    with pytest.raises(error, match=message):
        build(history["repo"].path, tmp_path / "c", HistoryOptions(**options))
    assert not (tmp_path / "c").exists()


def test_bad_repositories(history: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotARepository, match="not a git repository"):
        build(tmp_path / "plain", tmp_path / "c", HistoryOptions())
    with pytest.raises(NotARepository, match="give its top level"):
        build(history["repo"].path / "src", tmp_path / "c", HistoryOptions())
    empty = Repo(tmp_path / "empty")
    with pytest.raises(UnknownRevision, match="no commit named 'HEAD'"):
        build(empty.path, tmp_path / "c", HistoryOptions())


# --- the directory ------------------------------------------------------------


def test_output_rules(history: dict[str, Any], tmp_path: Path) -> None:
    repo = history["repo"].path
    with pytest.raises(OutputError, match="no such directory"):
        build(repo, tmp_path / "no" / "c", HistoryOptions())
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="not a directory"):
        build(repo, tmp_path / "file", HistoryOptions())
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    with pytest.raises(OutputError, match="not empty and not a history corpus"):
        build(repo, tmp_path / "full", HistoryOptions(), replace=True)
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    build(repo, tmp_path / "empty", HistoryOptions(max_questions=1))
    assert is_history_corpus(tmp_path / "empty")
    with pytest.raises(OutputError, match="pass replace=True to rebuild") as caught:
        build(repo, tmp_path / "empty", HistoryOptions(max_questions=2))
    assert caught.value.render(cli=True).endswith("; add --replace to rebuild")
    build(repo, tmp_path / "empty", HistoryOptions(max_questions=2), replace=True)
    assert len(read_history_corpus(tmp_path / "empty").questions) == 2
    os.symlink(tmp_path / "empty", tmp_path / "link")
    build(repo, tmp_path / "link", HistoryOptions(max_questions=3), replace=True)
    assert (tmp_path / "link").is_symlink()
    assert len(read_history_corpus(tmp_path / "empty").questions) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "file", "full", "link"]


def test_only_a_corpus_riido_pg_wrote_is_replaced(history: dict[str, Any], tmp_path: Path) -> None:
    """A corpus is everything its manifest names, with its checksums, and nothing else:
    a changed, a grown or a partial corpus, or a manifest of another format, is refused
    with ``replace`` as without it, and left as it was."""
    repo = history["repo"].path
    built(history, tmp_path / "good", max_questions=1)
    files = written_corpus(tmp_path / "good")
    assert files == ["history.json", "qrels/test.tsv", "queries.jsonl"]

    def spoiled(name: str, change: Any) -> Path:
        out = tmp_path / name
        shutil.copytree(tmp_path / "good", out, symlinks=True)
        change(out)
        assert written_corpus(out) is None
        before = {p: p.read_bytes() if p.is_file() else None for p in out.rglob("*")}
        with pytest.raises(OutputError, match="not a history corpus riido-pg wrote") as caught:
            build(repo, out, HistoryOptions(max_questions=2), replace=True)
        assert "replace" not in caught.value.render(cli=True).split(";")[-1]
        assert {p: p.read_bytes() if p.is_file() else None for p in out.rglob("*")} == before
        return out

    manifest = json.loads((tmp_path / "good" / MANIFEST_FILE).read_text())
    spoiled("extra", lambda d: (d / "notes.txt").write_text("mine"))
    spoiled("hidden", lambda d: (d / ".notes").write_text("mine"))
    spoiled("extra_dir", lambda d: (d / "src").mkdir())
    spoiled("qrels_extra", lambda d: (d / "qrels" / "dev.tsv").write_text("mine"))
    spoiled("edited", lambda d: (d / "queries.jsonl").write_text("changed\n"))
    spoiled("partial", lambda d: (d / "queries.jsonl").unlink())
    spoiled(
        "other_format",
        lambda d: (d / MANIFEST_FILE).write_text(json.dumps({**manifest, "format": "mine"})),
    )
    spoiled("not_json", lambda d: (d / MANIFEST_FILE).write_text("{"))
    spoiled("a_list", lambda d: (d / MANIFEST_FILE).write_text("[]"))
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes((tmp_path / "good" / "queries.jsonl").read_bytes())

    def linked(d: Path) -> None:
        (d / "queries.jsonl").unlink()
        (d / "queries.jsonl").symlink_to(outside)

    spoiled("linked", linked)
    escaping = {**manifest, "files": {**manifest["files"], "../outside.jsonl": "0" * 64}}
    spoiled("escaping", lambda d: (d / MANIFEST_FILE).write_text(json.dumps(escaping)))
    assert outside.exists()
    build(repo, tmp_path / "good", HistoryOptions(max_questions=2), replace=True)
    assert len(read_history_corpus(tmp_path / "good").questions) == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_interrupt_leaves_nothing(history: dict[str, Any], tmp_path: Path) -> None:
    repo = history["repo"].path

    def stop(phase: str, done: int, total: int) -> None:
        if phase == "commits" and done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(repo, tmp_path / "c", HistoryOptions(), progress=stop)
    assert list(tmp_path.iterdir()) == []
    build(repo, tmp_path / "c", HistoryOptions(max_questions=1))
    before = {p: p.read_bytes() for p in (tmp_path / "c").rglob("*") if p.is_file()}
    with pytest.raises(KeyboardInterrupt):
        build(repo, tmp_path / "c", HistoryOptions(), replace=True, progress=stop)
    assert {p: p.read_bytes() for p in (tmp_path / "c").rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["c"]


def test_an_interrupt_while_writing_leaves_the_old_corpus(
    history: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = history["repo"].path
    build(repo, tmp_path / "c", HistoryOptions(max_questions=1))
    old = read_history_corpus(tmp_path / "c")
    real = Path.write_bytes
    written: list[Path] = []

    def write_bytes(self: Path, data: bytes) -> int:
        written.append(self)
        if len(written) == 2:
            raise KeyboardInterrupt
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    with pytest.raises(KeyboardInterrupt):
        build(repo, tmp_path / "c", HistoryOptions(), replace=True)
    monkeypatch.undo()
    assert read_history_corpus(tmp_path / "c").questions == old.questions
    assert [p.name for p in tmp_path.iterdir()] == ["c"]


def test_reading_checks_every_file(history: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "c"
    built(history, out)
    queries, qrels, manifest = (
        out / "queries.jsonl",
        out / "qrels" / "test.tsv",
        out / MANIFEST_FILE,
    )
    good = {p: p.read_bytes() for p in (queries, qrels, manifest)}

    def broken(path: Path, data: bytes | None, message: str) -> None:
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data)
        with pytest.raises(InvalidCorpus, match=message):
            read_history_corpus(out)
        path.write_bytes(good[path])

    broken(qrels, None, f"{qrels}: missing")
    broken(queries, good[queries][:-20], f"{queries}: does not match {MANIFEST_FILE}")
    broken(manifest, b"{", f"{manifest}: line 1: malformed JSON")
    broken(manifest, b'{"format": "other"}', "not a history corpus manifest")
    text = good[manifest].decode()
    broken(manifest, text.replace('"format_version": 1', '"format_version": 2').encode(), "reads 1")
    broken(manifest, text.replace('"digest": null', '"digest": "x"').encode(), "digest")
    assert read_history_corpus(out).questions
    with pytest.raises(InvalidCorpus, match="no such directory"):
        read_history_corpus(tmp_path / "missing")


def test_a_changed_info_exclude_is_refused(history: dict[str, Any], tmp_path: Path) -> None:
    repo: Repo = history["repo"]
    _, corpus = built(history, tmp_path / "c", max_questions=1)
    exclude = repo.path / ".git" / "info" / "exclude"
    saved = exclude.read_bytes() if exclude.exists() else None
    exclude.parent.mkdir(exist_ok=True)
    try:
        exclude.write_text("*.rs\n")
        with pytest.raises(InvalidCorpus, match="changed since the corpus"):
            snapshot_documents(corpus, next(iter(corpus.snapshots)))
        _, other = built(history, tmp_path / "d", max_questions=1)
        assert other.extraction.info_exclude == ("*.rs",)
        assert list(other.snapshots) != list(corpus.snapshots)
    finally:
        if saved is None:
            exclude.unlink()
        else:
            exclude.write_bytes(saved)


def test_deleted_and_type_changed_files(tmp_path: Path) -> None:
    r = Repo(tmp_path / "small")
    r.write("a.py", "def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    r.write("b.py", "def three():\n    return 3\n")
    r.write("c.py", "def four():\n    return 4\n")
    r.commit("Start the small project here")
    r.remove("a.py")
    deleted = r.commit("Remove the first two helpers")
    (r.path / "b.py").unlink()
    os.symlink("c.py", r.path / "b.py")
    linked = r.commit("Point the third module at the fourth")
    r.git("mv", "c.py", "d.py")
    renamed = r.commit("Move the fourth helper to its own module")
    build(r.path, tmp_path / "out", HistoryOptions())
    corpus = read_history_corpus(tmp_path / "out")
    assert {q.commit: q.targets for q in corpus.questions} == {
        deleted: ("a.py:one:1", "a.py:two:5"),
        linked: ("b.py:three:1",),
    }
    assert corpus.skipped == {"no_target": 1, "root_commit": 1}  # a pure rename: no lines
    assert renamed not in {q.commit for q in corpus.questions}


RUST_TESTED = """fn real() -> u8 {
    1
}

#[test]
fn checks_real() {
    assert_eq!(real(), 1);
}

#[cfg(test)]
mod tests {
    fn it() {
        assert_eq!(super::real(), 1);
    }
}
"""


def test_no_tests_leaves_rust_tests_out_of_every_snapshot(tmp_path: Path) -> None:
    """``no_tests`` is recorded (``extraction.no_tests``, its own digest) and every
    snapshot is read as ``load --no-tests`` would: without the functions of test paths,
    of test modules and with test attributes. A ``#[test]`` function is never a
    target, with or without it."""
    r = Repo(tmp_path / "rs")
    r.write("src/lib.rs", RUST_TESTED)
    r.write("tests/it.rs", "#[test]\nfn works() {}\n")
    r.commit("Start the small rust crate")
    edit(r, "src/lib.rs", "fn real() -> u8 {\n    1", "fn real() -> u8 {\n    2")
    changed = r.commit("Return two from the real helper")
    edit(r, "src/lib.rs", "assert_eq!(real(), 1)", "assert_eq!(real(), 2)")
    r.commit("Expect two from the attributed check")
    build(r.path, tmp_path / "all", HistoryOptions())
    build(r.path, tmp_path / "lean", HistoryOptions(no_tests=True))
    every, lean = (read_history_corpus(tmp_path / n) for n in ("all", "lean"))
    for corpus in (every, lean):
        assert [(q.commit, q.targets) for q in corpus.questions] == [
            (changed, ("src/lib.rs:real:1",))
        ]
        assert corpus.skipped["no_target"] == 1  # the attributed check changed alone
    assert every.extraction.digest is None and not every.extraction.no_tests
    assert lean.extraction.no_tests and lean.extraction.digest is not None
    assert lean.manifest["extraction"]["no_tests"] is True
    assert "no_tests" not in every.manifest["extraction"]
    (sid,) = lean.snapshots
    assert sid == f"rs@{lean.questions[0].parent[:12]}-{lean.extraction.digest}"
    assert [d.id for d in snapshot_documents(lean, sid)] == ["src/lib.rs:real:1"]
    (full,) = every.snapshots
    assert [d.id for d in snapshot_documents(every, full)] == [
        "src/lib.rs:real:1",
        "src/lib.rs:checks_real:6",
        "src/lib.rs:tests.it:12",
        "tests/it.rs:works:2",
    ]


# --- the rules as pure functions ----------------------------------------------


@pytest.mark.parametrize(
    ("subject", "text", "reason"),
    [
        ("Fixed #35123 -- Fixed a crash in values().", "Fixed a crash in values().", None),
        ("Refs #1, #2: Deprecated the old form.", "Deprecated the old form.", None),
        ("fix(config): handle an empty target (#17382)", "config: handle an empty target", None),
        ("feat!: drop the legacy loader", "drop the legacy loader", None),
        ("[3.12] gh-12345: Fix nested f-strings (GH-12346)", "Fix nested f-strings", None),
        ("ABC-123: Make sessions reusable", "Make sessions reusable", None),
        ("Add type hints to the loader [skip ci]", "Add type hints to the loader", None),
        ("Improve url_for docs, fixes #1234 and #1235", "Improve url_for docs", None),
        ("Support owner/repo#12 style links now", "Support style links now", None),
        ("Accept any whitespace in reflection", "Accept any whitespace in reflection", None),
        ("Merge pull request #1 from x/y", "Merge pull request from x/y", "merge"),
        ('Revert "Add the cache"', 'Revert "Add the cache"', "revert"),
        ("fixup! Add the cache", "fixup! Add the cache", "fixup"),
        ("Bump version to 1.1", "Bump version to 1.1", "release"),
        ("Release 3.0.0", "Release 3.0.0", "release"),
        ("2.0.1", "2.0.1", "release"),
        ("chore(deps): update rust crate foo to v1.2", "update rust crate foo to v1.2", "release"),
        ("Update requests requirement from 2.1 to 2.2", None, "release"),
        ("Added release notes for 4.2.1.", None, "changelog"),
        ("Update CHANGES.rst for the fix", None, "changelog"),
        ("Fix a typo in the parser", None, "typo"),
        ("Run black on the code base", None, "format"),
        ("style: reorder imports", "reorder imports", "format"),
        ("Remove trailing whitespace in models", None, "format"),
        ("Fix clippy warnings in the resolver", None, "format"),
        ("Use pathlib", "Use pathlib", "too_short"),
        ("(#12)", "", "too_short"),
    ],
)
def test_subject_rules(subject: str, text: str | None, reason: str | None) -> None:
    verdict = judge_subject(subject)
    assert verdict.reason == reason
    if text is not None:
        assert verdict.text == text


@given(st.text(st.sampled_from("ab Fix#12()[]:-,gh skip ci\t"), max_size=40))
def test_cleaned_subjects_are_folded_and_free_of_references(subject: str) -> None:
    text = clean_subject(subject)
    assert text == text.strip() and "  " not in text and "\t" not in text
    assert re.search(r"(?<![\w/])(?:#|gh-)\d+\b", text, re.IGNORECASE) is None
    assert "[skip ci]" not in text.lower()


@settings(deadline=None, max_examples=25)  # cleaning 64 KB takes ~0.1 s
@given(
    st.text(st.sampled_from("ab é€𝄞"), min_size=1, max_size=8),
    st.integers(MAX_QUERY_BYTES // 8, MAX_QUERY_BYTES // 2),
)
def test_a_question_is_cut_at_the_longest_a_query_may_be(word: str, repeat: int) -> None:
    subject = "Fix " + (word + " ") * repeat
    text = clean_subject(subject)
    size = len(text.encode("utf-8"))
    assert size <= MAX_QUERY_BYTES and text == text.strip()
    whole = clean_subject(subject[: MAX_QUERY_BYTES // 4])  # short enough to stay whole
    assert text.startswith(whole) or whole.startswith(text)
    folded = " ".join(subject.split())  # nothing else of these words is cleaned away
    if len(folded.encode("utf-8")) > MAX_QUERY_BYTES:
        assert folded.startswith(text) and size > MAX_QUERY_BYTES - 5  # on a boundary
    else:
        assert text == folded


@st.composite
def nested_spans(draw: st.DrawFn) -> list[tuple[int, int]]:
    """Well-nested line ranges, as functions in a file are."""
    spans: list[tuple[int, int]] = []

    def fill(first: int, last: int, depth: int) -> None:
        line = first
        while line <= last and depth < 3 and draw(st.booleans()):
            start = line + draw(st.integers(0, 3))
            end = start + draw(st.integers(0, 6))
            if end > last:
                return
            spans.append((start, end))
            fill(start + 1, end, depth + 1)
            line = end + 1

    fill(1, 40, 0)
    return spans


@given(nested_spans(), st.integers(0, 42), st.booleans(), st.sets(st.integers(0, 20)))
def test_innermost_is_the_tightest_kept_span(
    spans: list[tuple[int, int]], line: int, insert: bool, dropped: set[int]
) -> None:
    found = [
        Span(first, last, Function(f"f{i}", "", {}))  # type: ignore[typeddict-item]
        for i, (first, last) in enumerate(spans)
    ]
    found.sort(key=lambda s: (s.first, -s.last))

    def keep(span: Span) -> bool:  # e.g. a function a load leaves out
        return int(span.function.id[1:]) not in dropped

    low, high = (line, line + 1) if insert else (line, line)
    got = innermost(found, [s.first for s in found], low, high, keep)
    containing = [s for s in found if s.first <= low and high <= s.last and keep(s)]
    assert got == max(containing, key=lambda s: (s.first, -s.last), default=None)


@pytest.mark.parametrize(
    ("path", "qualname", "left_out"),
    [
        ("src/app.py", "parse", False),
        ("tests/test_app.py", "test_parse", True),
        ("pkg/test.py", "helper", True),  # a test file name
        ("web/app.spec.ts", "renders", True),
        ("docs/conf.py", "setup", True),
        ("benchmarks/run.py", "main", True),  # the shared rule's benchmark directory
        ("pkg/fixtures/data.py", "load", False),  # not a test directory for anyone
        ("Tests/app.py", "run", False),  # names are compared exactly
        ("src/lib.rs", "tests.it", True),  # a Rust mod tests
        ("src/Suite.java", "Suite.test.check", True),
        ("src/lib.rs", "tests", False),  # its own name is not a scope
        ("src/lib.rs", "latest.testing", False),
    ],
)
def test_test_and_docs_code_is_never_a_target(path: str, qualname: str, left_out: bool) -> None:
    assert is_test_or_doc(path, qualname) is left_out
    assert is_test_or_doc(path) is (is_test_path(path) or is_doc_or_example_path(path))


@given(
    st.lists(
        st.sampled_from(["src", "tests", "docs", "a", "spec", "Test", "x_test.go"]), min_size=1
    ),
    st.lists(st.sampled_from(["test", "tests", "Tests", "mod", "run", "testing"]), min_size=1),
)
def test_the_scope_rule_only_adds_to_the_shared_rules(parts: list[str], names: list[str]) -> None:
    path, qualname = "/".join(parts), ".".join(names)
    shared = is_test_path(path) or is_doc_or_example_path(path)
    scoped = any(name in ("test", "tests") for name in names[:-1])
    assert is_test_or_doc(path, qualname) is (shared or scoped)
