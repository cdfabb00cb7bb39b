"""``riido-pg corpus history``, ``extract --rev`` and ``load --rev`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import Cli, CliResult, run_cli, run_on_terminal
from support.database import Database
from support.gitrepos import Repo

PY = "def {name}(x):\n    return x + {n}\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    r = Repo(tmp_path_factory.mktemp("cli") / "tool")
    r.write("pkg/core.py", PY.format(name="load", n=1) + "\n\n" + PY.format(name="save", n=2))
    r.write("pkg/extra.go", "package pkg\n\nfunc Extra() int { return 1 }\n")
    r.write(".gitignore", "*.tmp.py\n")
    r.write("pkg/scratch.tmp.py", PY.format(name="scratch", n=0))
    r.commit("Start the tool with a loader")
    for n in range(3, 9):
        r.write("pkg/core.py", PY.format(name="load", n=n) + "\n\n" + PY.format(name="save", n=2))
        r.commit(f"Make the loader add {n} to every value")
    r.commit("Bump version to 2.0")
    return r


def offline(args: list[str], **kwargs: Any) -> CliResult:
    """``riido-pg ARGS`` in this process with no database at hand (none is needed)."""
    return run_cli(args, dsn=None, **kwargs)


def test_corpus_history_writes_a_corpus(repo: Repo, tmp_path: Path) -> None:
    out = tmp_path / "corpus\x1b[31m"  # a path is shown, never sent to the terminal
    result = offline(["corpus", "history", str(repo.path), "--output", str(out), "--max", "3"])
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == (
        f"wrote {tmp_path}/corpus\\x1b[31m: 3 questions from 4 commits (skipped: 1 release)\n"
    )
    lines = (out / "queries.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == [
        f"Make the loader add {n} to every value" for n in (8, 7, 6)
    ]
    qrels = (out / "qrels" / "test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore"
    assert [line.split("\t")[1:] for line in qrels[1:]] == [["pkg/core.py:load:1", "1"]] * 3
    again = tmp_path / "again"
    offline(["corpus", "history", str(repo.path), "--output", str(again), "--max", "3"])
    for rel in ("history.json", "queries.jsonl", "qrels/test.tsv"):
        assert (out / rel).read_bytes() == (again / rel).read_bytes()
    refused = offline(["corpus", "history", str(repo.path), "--output", str(out)])
    assert (refused.code, refused.stderr) == (
        2,
        f"error: {tmp_path}/corpus\\x1b[31m: holds a history corpus already; "
        "add --replace to rebuild\n",
    )
    replaced = offline(["corpus", "history", str(repo.path), "--output", str(out), "--replace"])
    assert replaced.code == 0 and "6 questions from 8 commits" in replaced.stdout


def test_corpus_history_no_tests_is_recorded(repo: Repo, tmp_path: Path) -> None:
    """``--no-tests`` names its snapshots apart and is kept in ``history.json``."""
    out = tmp_path / "lean"
    args = ["corpus", "history", str(repo.path), "--output", str(out), "--max", "2"]
    result = offline([*args, "--no-tests"])
    assert (result.code, result.stderr) == (0, "")
    manifest = json.loads((out / "history.json").read_text())
    digest = manifest["extraction"]["digest"]
    assert manifest["extraction"]["no_tests"] is True and len(digest) == 8
    assert len(manifest["snapshots"]) == 2
    assert all(s.endswith(f"-{digest}") for s in manifest["snapshots"])


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("manifest", ["history", "copy"])
def test_corpus_history_never_replaces_a_users_directory(
    repo: Repo, tmp_path: Path, manifest: str
) -> None:
    """A ``history.json`` (any, or a real corpus's) beside a user's files: --replace
    deleted ``thesis.txt`` and ``src/``, and the first error suggested --replace."""
    out = tmp_path / "work"
    out.mkdir()
    if manifest == "copy":
        corpus = tmp_path / "corpus"
        offline(["corpus", "history", str(repo.path), "--output", str(corpus), "--max", "2"])
        for rel in ("history.json", "queries.jsonl", "qrels/test.tsv"):
            (out / rel).parent.mkdir(exist_ok=True)
            (out / rel).write_bytes((corpus / rel).read_bytes())
    else:
        (out / "history.json").write_text('{"notes": "my reading history"}\n')
    (out / "thesis.txt").write_text("three years of work\n")
    (out / "src").mkdir()
    (out / "src" / "main.py").write_text("print(1)\n")
    before = _tree(out)
    for extra in ([], ["--replace"]):
        result = offline(["corpus", "history", str(repo.path), "--output", str(out), *extra])
        assert (result.code, result.stdout) == (2, ""), result
        assert result.stderr == (
            f"error: {out}: not empty and not a history corpus riido-pg wrote (it is replaced "
            "only when it holds a corpus's files and nothing else); give a new or empty "
            "directory\n"
        )
        assert "--replace" not in result.stderr
        assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["work", *(["corpus"] if manifest == "copy" else [])]
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--until", "nope"], 2, "{repo}: no commit named 'nope'"),
        (["--max", "0"], 2, "--max must be a whole number of at least 1, not '0'"),
        (["--max-targets", "0"], 2, "--max-targets must be a whole number of at least 1, not '0'"),
        (["--lang", "cobol"], 2, "unknown language cobol"),
        (["--until", "HEAD", "--since", "HEAD~1"], 2, "{repo}: no qualifying commit: 0 questions"),
        (["--name", "a/b"], 2, "--name 'a/b'"),
        (["--since", "^HEAD~2"], 2, "{repo}: no commit named '^HEAD~2'"),
        (["--until", "^HEAD"], 2, "{repo}: no commit named '^HEAD'"),
    ],
)
def test_corpus_history_bad_input(
    repo: Repo, tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    out = tmp_path / "c"
    result = offline(["corpus", "history", str(repo.path), "--output", str(out), *args])
    assert result.code == code and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message.format(repo=repo.path) in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_corpus_history_bad_repository(repo: Repo, tmp_path: Path) -> None:
    out = str(tmp_path / "c")
    plain = tmp_path / "plain"
    plain.mkdir()
    result = offline(["corpus", "history", str(plain), "--output", out])
    assert (result.code, result.stderr) == (2, f"error: {plain}: not a git repository\n")
    result = offline(
        ["corpus", "history", str(repo.path), "--output", out], env={"PATH": "/nonexistent"}
    )
    assert (result.code, result.stderr) == (
        1,
        "error: git is not installed (no git on PATH); install git to read a revision\n",
    )
    missing = offline(["corpus", "history", str(repo.path), "--output", str(tmp_path / "a" / "b")])
    assert missing.code == 2 and "no such directory" in missing.stderr
    assert list(tmp_path.iterdir()) == [plain]


def test_extract_rev_is_the_checkout(repo: Repo, tmp_path: Path) -> None:
    rev = repo.git("rev-parse", "HEAD~4")
    from_rev = offline(["extract", str(repo.path), "--rev", rev])
    assert from_rev.code == 0, from_rev.stderr
    checkout = tmp_path / "checkout"
    repo.git("worktree", "add", "-q", "--detach", str(checkout), rev)
    try:
        from_dir = offline(["extract", str(checkout)])
    finally:
        repo.git("worktree", "remove", "--force", str(checkout))
    assert from_rev.stdout == from_dir.stdout and '"pkg/core.py:load:1"' in from_rev.stdout
    assert (
        from_rev.stderr
        == from_dir.stderr
        == "note: 3 functions in the 2 files read; skipped: 1 file in another language, "
        "1 ignored\n"
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--rev", "nope"], 2, "error: {repo}: no commit named 'nope'\n"),
        (["--rev", "-p"], 2, "error: '-p' is not a revision\n"),
        (["--rev", "^HEAD"], 2, "error: {repo}: no commit named '^HEAD'\n"),
        (["--rev", "^HEAD~1"], 2, "error: {repo}: no commit named '^HEAD~1'\n"),
    ],
)
def test_extract_rev_errors(repo: Repo, args: list[str], code: int, message: str) -> None:
    result = offline(["extract", str(repo.path), *args])
    assert (result.code, result.stdout, result.stderr) == (code, "", message.format(repo=repo.path))


def test_extract_rev_of_a_directory_named_with_a_newline(tmp_path: Path) -> None:
    r = Repo(tmp_path / "nl")
    r.write("new\nline/deep/a.py", PY.format(name="inside", n=1))
    r.write("new/b.py", PY.format(name="beside", n=2))
    r.commit("Add a directory whose name holds a newline")
    result = offline(["extract", str(r.path / "new\nline"), "--rev", "HEAD"])
    assert (result.code, result.stderr) == (0, "note: 1 function in the 1 file read\n")
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["deep/a.py:inside:1"]
    deep = offline(["extract", str(r.path / "new\nline" / "deep"), "--rev", "HEAD"])
    assert deep.code == 0 and '"a.py:inside:1"' in deep.stdout, deep.stderr


def malformed_repo(path: Path) -> Repo:
    """A commit whose root tree has an entry named ``a/b.py`` (git writes no such
    tree, but ``hash-object --literally`` does)."""
    r = Repo(path)
    blob = r.git("hash-object", "-w", "--stdin", input=PY.format(name="f", n=1).encode())
    entries = b"".join(
        b"100644 " + name + b"\0" + bytes.fromhex(blob) for name in (b"a/b.py", b"ok.py")
    )
    (path.parent / "tree").write_bytes(entries)
    tree = r.git("hash-object", "-t", "tree", "-w", "--literally", str(path.parent / "tree"))
    commit = r.git("commit-tree", "-m", "A malformed tree", tree)
    r.git("update-ref", "refs/heads/main", commit)
    return r


def test_a_malformed_tree_is_one_clear_error(cli: Cli, db: Database, tmp_path: Path) -> None:
    r = malformed_repo(tmp_path / "bad")
    message = f"error: {r.path}: malformed tree: entry 'a/b.py' (git checkout refuses it)\n"
    result = offline(["extract", str(r.path), "--rev", "HEAD"])
    assert (result.code, result.stdout, result.stderr) == (2, "", message)
    before = db.counts()
    loaded = cli(["load", "bad", str(r.path), "--rev", "HEAD"])
    assert (loaded.code, loaded.stderr) == (2, message)
    assert db.counts() == before


def test_extract_rev_needs_a_repository_and_git(repo: Repo, tmp_path: Path) -> None:
    result = offline(["extract", str(tmp_path), "--rev", "HEAD"])
    assert (result.code, result.stderr) == (2, f"error: {tmp_path}: not a git repository\n")
    result = offline(["extract", str(repo.path), "--rev", "HEAD"], env={"PATH": "/nonexistent"})
    assert result.code == 1 and result.stderr.startswith("error: git is not installed")


def test_load_rev(cli: Cli, repo: Repo, tmp_path: Path) -> None:
    rev = repo.git("rev-parse", "HEAD~2")
    loaded = cli(["load", "tool@rev", str(repo.path), "--rev", rev])
    assert loaded.code == 0, loaded.stderr
    assert loaded.stdout == "loaded snapshot 'tool@rev' (3 documents)\n"
    query = cli(["query", "tool@rev", "add seven", "--format", "json"])
    ids = [c["id"] for c in json.loads(query.stdout)["candidates"]]
    assert sorted(ids) == ["pkg/core.py:load:1", "pkg/core.py:save:5", "pkg/extra.go:Extra:3"]
    checkout = tmp_path / "checkout"
    repo.git("worktree", "add", "-q", "--detach", str(checkout), rev)
    try:  # the same documents: loading the checkout under that id changes nothing
        same = cli(["load", "tool@rev", str(checkout)])
    finally:
        repo.git("worktree", "remove", "--force", str(checkout))
    assert same.stdout == "unchanged: snapshot 'tool@rev' (3 documents)\n"
    other = cli(["load", "tool@rev", str(repo.path), "--rev", "HEAD~6"])
    assert other.code == 2 and "different content" in other.stderr


def test_load_rev_errors_store_nothing(cli: Cli, repo: Repo, db: Database, tmp_path: Path) -> None:
    before = db.counts()
    bad = cli(["load", "x", str(repo.path), "--rev", "nope"])
    assert (bad.code, bad.stderr) == (2, f"error: {repo.path}: no commit named 'nope'\n")
    table = cli(["load", "x", "--from-table", "a.b", "--rev", "HEAD"])
    assert table.code == 2 and "--rev" in table.stderr
    plain = cli(["load", "x", str(tmp_path), "--rev", "HEAD"])
    assert (plain.code, plain.stderr) == (2, f"error: {tmp_path}: not a git repository\n")
    gitless = cli(["load", "x", str(repo.path), "--rev", "HEAD"], env={"PATH": "/nonexistent"})
    assert gitless.code == 1 and gitless.stderr.startswith("error: git is not installed")
    assert db.counts() == before


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """A repository with test code, generated code and two commits."""
    r = Repo(tmp_path_factory.mktemp("tested") / "app")
    r.write("src/app.py", "def app(): pass\n")
    r.write("src/app_test.py", "def test_app(): pass\n")
    r.write("tests/test_b.py", "def test_b(): pass\n\n\ndef helper(): pass\n")
    r.write("gen/out.py", "def generated(): pass\n")
    r.commit("Start the app")
    r.write("src/app.py", "def app(): pass\n\n\ndef later(): pass\n")
    r.commit("Add later")
    return r


def test_extract_rev_no_tests_and_exclude_are_the_checkout(tested: Repo, tmp_path: Path) -> None:
    rev = tested.git("rev-parse", "HEAD~1")
    checkout = tmp_path / "checkout"
    tested.git("worktree", "add", "-q", "--detach", str(checkout), rev)
    runs: dict[str, tuple[Any, Any]] = {}
    try:
        for options in ([], ["--no-tests"], ["--no-tests", "--exclude", "gen/"]):
            from_rev = offline(["extract", str(tested.path), "--rev", rev, *options])
            from_dir = offline(["extract", str(checkout), *options])
            assert from_rev.code == from_dir.code == 0, from_rev.stderr
            runs[" ".join(options)] = (from_rev, from_dir)
    finally:
        tested.git("worktree", "remove", "--force", str(checkout))
    for from_rev, from_dir in runs.values():
        assert (from_rev.stdout, from_rev.stderr) == (from_dir.stdout, from_dir.stderr)
    everything, no_tests, excluded = (r for r, _ in runs.values())
    assert everything.stderr == (
        "note: 5 functions in the 4 files read; 3 of them in test files (--no-tests leaves "
        "them out)\n"
    )
    assert [json.loads(line)["id"] for line in no_tests.stdout.splitlines()] == [
        "gen/out.py:generated:1",
        "src/app.py:app:1",
    ]
    assert no_tests.stderr == (  # the 3 functions counted above, in 2 files
        "note: 2 functions in the 2 files read; --no-tests left out 2 files (3 functions)\n"
    )
    assert [json.loads(line)["id"] for line in excluded.stdout.splitlines()] == ["src/app.py:app:1"]
    assert excluded.stderr == (
        "note: 1 function in the 1 file read; skipped: 1 excluded; --no-tests left out "
        "2 files (3 functions)\n"
    )
    only_tests = offline(["extract", str(tested.path / "tests"), "--rev", rev, "--no-tests"])
    assert (only_tests.code, only_tests.stdout) == (2, "")
    assert only_tests.stderr.startswith(
        f"error: {tested.path / 'tests'}: no functions: left out as tests: "
        "1 file in a supported language: "
    )


def test_load_rev_no_tests(cli: Cli, tested: Repo, tmp_path: Path) -> None:
    rev = tested.git("rev-parse", "HEAD~1")
    loaded = cli(
        ["load", "app@rev", str(tested.path), "--rev", rev, "--no-tests", "--exclude", "gen/"]
    )
    assert (loaded.code, loaded.stdout) == (0, "loaded snapshot 'app@rev' (1 document)\n")
    assert loaded.stderr == (
        "note: 1 function in the 1 file read; skipped: 1 excluded; --no-tests left out "
        "2 files (3 functions)\n"
    )
    checkout = tmp_path / "checkout"
    tested.git("worktree", "add", "-q", "--detach", str(checkout), rev)
    try:  # the same documents: loading the checkout under that id changes nothing
        same = cli(["load", "app@rev", str(checkout), "--no-tests", "--exclude", "gen/"])
    finally:
        tested.git("worktree", "remove", "--force", str(checkout))
    assert same.stdout == "unchanged: snapshot 'app@rev' (1 document)\n"
    later = cli(["load", "app@head", str(tested.path), "--rev", "HEAD", "--no-tests"])
    assert later.stdout == "loaded snapshot 'app@head' (3 documents) on base 'app@rev': +2 −0\n"
    query = cli(["query", "app@head", "later", "--format", "json"])
    ids = [c["id"] for c in json.loads(query.stdout)["candidates"]]
    assert sorted(ids) == ["gen/out.py:generated:1", "src/app.py:app:1", "src/app.py:later:4"]


def test_extract_rev_counts_submodules_in_its_note(tmp_path: Path) -> None:
    r = Repo(tmp_path / "withsub")
    r.write("a.py", "def a(): pass\n")
    r.git("add", "-A")
    r.gitlink("vendor/lib")
    r.gitlink("other")
    r.commit("Start with two submodules", add=False)
    result = offline(["extract", str(r.path), "--rev", "HEAD"])
    assert (result.code, result.stderr) == (
        0,
        "note: 1 function in the 1 file read; skipped: 1 vendored, 1 submodule not read\n",
    )


def test_phase_rules() -> None:
    """A new phase marks every earlier one finished, except that streamed phases (a
    load's input; corpus history's commits and questions) run side by side, and an
    outer phase (eval's snapshots loaded, each load's phases inside it) is never
    finished by another."""
    from riido_pg.cli.progress import OUTER, PHASES, STREAMED, finishes

    for phase in PHASES:
        for earlier in PHASES:
            side_by_side = (phase in STREAMED and earlier in STREAMED) or earlier in OUTER
            assert finishes(phase, earlier) is not side_by_side, (phase, earlier)
    assert not finishes("documents", "snapshots") and finishes("snapshots", "statistics")
    assert not finishes("questions", "commits") and not finishes("commits", "questions")
    assert finishes("index", "documents") and finishes("questions", "index")


def test_corpus_history_progress_on_a_terminal(repo: Repo, tmp_path: Path) -> None:
    """On a terminal, the builder shows commits read and questions found, side by side:
    the first question found does not mark the commits row finished. (A terminal: a
    real process.)"""
    out = tmp_path / "corpus"
    args = ["corpus", "history", str(repo.path), "--output", str(out), "--max", "3"]
    run = run_on_terminal(args, dsn=None, env={"COLUMNS": "100", "TERM": "xterm"})
    assert run.code == 0 and run.piped.startswith(b"wrote ")
    shown = run.terminal.decode("utf-8", "replace")
    assert "commits read" in shown and "✓ questions found" in shown  # 3 of 3
    assert "✓ commits read" not in shown  # still reading when questions are found
    assert "error" not in shown
