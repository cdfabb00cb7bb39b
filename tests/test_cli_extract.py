"""`riido-pg extract DIR` and `riido-pg load ID DIR` (a source tree)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from support.extract_golden import FIXTURE_LANGUAGES, FIXTURES, GOLDEN


@pytest.mark.parametrize("lang", FIXTURE_LANGUAGES)
def test_extract_prints_the_golden_json_lines(cli: Any, lang: str) -> None:
    result = cli(["extract", str(FIXTURES / lang), "--lang", lang])
    assert result.code == 0, result.stderr
    assert result.stdout == (GOLDEN / f"{lang}.jsonl").read_text(encoding="utf-8")
    assert result.stderr.startswith("note: ") and result.stderr.count("\n") == 1


def test_extract_output_file_is_byte_identical_on_rerun(cli: Any, tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        result = cli(["extract", str(FIXTURES), "--output", str(out)])
        assert (result.code, result.stdout) == (0, ""), result.stderr
    assert first.read_bytes() == second.read_bytes()
    lines = first.read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == len(set(ids)) > 50
    assert {json.loads(line)["metadata"]["language"] for line in lines} == set(FIXTURE_LANGUAGES)


def test_extract_exclude_and_lang(cli: Any) -> None:
    result = cli(["extract", str(FIXTURES), "--lang", "go", "--lang", "rust"])
    langs = {json.loads(line)["metadata"]["language"] for line in result.stdout.splitlines()}
    assert (result.code, langs) == (0, {"go", "rust"})
    result = cli(["extract", str(FIXTURES), "--lang", "go", "--exclude", "go/"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(
        f"error: {FIXTURES}: no functions: the exclude patterns matched 1 directory: "
        "0 functions, no file read; skipped: "
    )


def test_extract_excluding_every_file_says_so(cli: Any, tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("def f(): pass\n")
    (tmp_path / "README.md").write_text("")
    result = cli(["extract", str(tmp_path), "--exclude", "*.py"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {tmp_path}: no functions: the exclude patterns matched 3 files in a "
        "supported language: 0 functions, no file read; skipped: 1 file in another "
        "language, 3 excluded\n"
    )


def make_tests_tree(root: Path) -> None:
    for rel, text in {
        "src/app.py": "def app(): pass\n",
        "src/app_test.py": "def test_app(): pass\n",
        "tests/test_b.py": "def test_b(): pass\n\n\ndef helper(): pass\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_extract_note_counts_test_functions_and_no_tests_leaves_them_out(
    cli: Any, tmp_path: Path
) -> None:
    make_tests_tree(tmp_path)
    result = cli(["extract", str(tmp_path)])
    assert result.code == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [
        "src/app.py:app:1",
        "src/app_test.py:test_app:1",
        "tests/test_b.py:test_b:1",
        "tests/test_b.py:helper:4",
    ]
    assert result.stderr == (
        "note: 4 functions in the 3 files read; 3 of them in test files (--no-tests leaves "
        "them out)\n"
    )
    result = cli(["extract", str(tmp_path), "--no-tests"])
    assert result.code == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["src/app.py:app:1"]
    assert result.stderr == (
        "note: 1 function in the 1 file read; --no-tests left out 2 files (3 functions)\n"
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such directory"),
        (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "not a directory"),
    ],
)
def test_extract_bad_directory_exit_2(cli: Any, tmp_path: Path, make: Any, message: str) -> None:
    path = make(tmp_path)
    result = cli(["extract", str(path)])
    assert (result.code, result.stdout, result.stderr) == (2, "", f"error: {path}: {message}\n")


def test_unknown_language_exit_2(cli: Any) -> None:
    result = cli(["extract", str(FIXTURES), "--lang", "cobol"])
    assert result.code == 2 and result.stderr.startswith("error: ") and "python" in result.stderr


def test_load_a_source_tree_then_query(cli: Any, db: Any) -> None:
    tree = str(FIXTURES / "python")
    result = cli(["load", "pytree", tree])
    assert result.code == 0, result.stderr
    golden = (GOLDEN / "python.jsonl").read_text(encoding="utf-8").splitlines()
    assert result.stdout == f"loaded snapshot 'pytree' ({len(golden)} documents)\n"
    again = cli(["load", "pytree", tree])  # the same tree: nothing to do
    assert again.stdout == f"unchanged: snapshot 'pytree' ({len(golden)} documents)\n"
    ids = {json.loads(line)["id"] for line in golden}
    ranked = json.loads(cli(["query", "pytree", "area of a circle"]).stdout)["candidates"]
    assert {c["id"] for c in ranked} == ids


def test_load_extract_output_equals_load_tree(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "py.jsonl"
    assert cli(["extract", str(FIXTURES / "python"), "--output", str(out)]).code == 0
    assert cli(["load", "via-file", str(out)]).code == 0
    assert cli(["load", "via-tree", str(FIXTURES / "python")]).code == 0
    a = json.loads(cli(["query", "via-file", "parse shapes"]).stdout)["candidates"]
    b = json.loads(cli(["query", "via-tree", "parse shapes"]).stdout)["candidates"]
    assert a == b


def test_load_empty_tree_says_what_was_found(cli: Any, db: Any, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# nothing to index\n")
    before = db.counts()
    result = cli(["load", "empty", str(tmp_path)])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {tmp_path}: no functions in a supported language: "
        "0 functions, no file read; skipped: 1 file in another language\n"
    )
    assert db.counts() == before


def test_tree_options_need_a_tree(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text('{"id": "a", "text": "read"}\n')
    for option in (["--lang", "python"], ["--no-tests"]):
        result = cli(["load", "x", str(src), *option])
        assert result.code == 2 and "apply to a source tree" in result.stderr


def test_load_a_tree_without_its_tests(cli: Any, tmp_path: Path) -> None:
    make_tests_tree(tmp_path)
    result = cli(["load", "notests", str(tmp_path), "--no-tests"])
    assert (result.code, result.stdout) == (0, "loaded snapshot 'notests' (1 document)\n")
    assert result.stderr == (
        "note: 1 function in the 1 file read; --no-tests left out 2 files (3 functions)\n"
    )
    ranked = json.loads(cli(["query", "notests", "app"]).stdout)["candidates"]
    assert [c["id"] for c in ranked] == ["src/app.py:app:1"]


def test_unindexable_functions_are_left_out_of_a_tree_load(cli: Any, tmp_path: Path) -> None:
    from riido_pg.extract.documents import unindexable
    from riido_pg.storage.loading import MAX_WORD_BYTES

    assert unindexable("x" * (MAX_WORD_BYTES + 1)) and not unindexable("x" * MAX_WORD_BYTES)
    assert not unindexable("x " * MAX_WORD_BYTES)
    assert unindexable("é" * (MAX_WORD_BYTES // 2 + 1))  # bytes, not characters
    (tmp_path / "gen.py").write_text(
        "def table():\n    return '" + "ab" * 2000 + "'\n\n\ndef ok():\n    return 1\n"
    )
    result = cli(["load", "gen", str(tmp_path)])
    assert result.code == 0, result.stderr
    assert result.stdout == "loaded snapshot 'gen' (1 document)\n"
    assert result.stderr == (
        "note: 2 functions in the 1 file read; skipped: 1 function with words too long to "
        "index\n"
        "note: left out, with words too long to index: gen.py:table:1 (--debug lists them all)\n"
    )


def test_unindexable_functions_are_named_a_few_and_debug_lists_all(
    cli: Any, tmp_path: Path
) -> None:
    word = "ab" * 2000
    (tmp_path / "gen.py").write_text(
        "".join(f"def t{i}():\n    return '{word}'\n\n\n" for i in range(5)) + "def ok(): pass\n"
    )
    result = cli(["load", "gen5", str(tmp_path)])
    assert result.code == 0, result.stderr
    assert result.stderr.splitlines()[1] == (
        "note: left out, with words too long to index: gen.py:t0:1, gen.py:t1:5, gen.py:t2:9 "
        "and 2 more (--debug lists them all)"
    )
    result = cli(["load", "gen5-debug", str(tmp_path), "--debug"])
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[1] == (
        "note: left out, with words too long to index: gen.py:t0:1, gen.py:t1:5, gen.py:t2:9 "
        "and 2 more"
    )
    assert lines[2:] == [
        f"note: gen.py: gen.py:t{i}:{4 * i + 1}: a word too long to index" for i in range(5)
    ]


def test_a_tree_whose_every_function_is_unindexable_names_them(cli: Any, tmp_path: Path) -> None:
    word = "ab" * 2000
    for i in range(4):
        (tmp_path / f"g{i}.py").write_text(f"def t{i}():\n    return '{word}'\n")
    result = cli(["load", "allgen", str(tmp_path)])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {tmp_path}: nothing to load: every function found has a word too long to "
        "index (g0.py:t0:1, g1.py:t1:1, g2.py:t2:1 and 1 more): 4 functions in the 4 files "
        "read; skipped: 4 functions with words too long to index\n"
    )


def test_extract_output_onto_dev_null_a_symlink_and_stdout(cli: Any, tmp_path: Path) -> None:
    before = os.stat("/dev/null")
    result = cli(["extract", str(FIXTURES / "go"), "--output", "/dev/null"])
    assert (result.code, result.stdout) == (0, ""), result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert os.stat("/dev/null").st_rdev == before.st_rdev
    real = tmp_path / "real.jsonl"
    real.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert cli(["extract", str(FIXTURES / "go"), "--output", str(link)]).code == 0
    assert link.is_symlink() and real.read_text() == (GOLDEN / "go.jsonl").read_text()
    result = cli(["extract", str(FIXTURES / "go"), "--output", "-"])
    assert (result.code, result.stdout) == (0, (GOLDEN / "go.jsonl").read_text())


def test_extract_error_keeps_the_previous_output(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("keep\n")
    empty = tmp_path / "emptydir"
    empty.mkdir()
    result = cli(["extract", str(empty), "--output", str(out)])
    assert result.code == 2 and result.stderr.startswith("error: ")
    assert out.read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emptydir", "out.jsonl"]


def test_extract_output_in_a_missing_directory_exit_2(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    result = cli(["extract", str(FIXTURES / "go"), "--output", str(out)])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (f"error: {out}: cannot write: {out.parent}: no such directory\n")
    assert not (tmp_path / "nonexistent").exists()


def test_extract_debug_lists_what_was_left_out(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("def ok():\n    return 1\n")
    (tmp_path / "blob.py").write_bytes(b"def x():\n    return '\0'\n")
    plain = cli(["extract", str(tmp_path)])
    assert plain.code == 0, plain.stderr
    assert plain.stderr == "note: 1 function in the 1 file read; skipped: 1 binary file\n"
    debug = cli(["extract", str(tmp_path), "--debug"])
    assert (debug.code, debug.stdout) == (0, plain.stdout)
    assert debug.stderr == plain.stderr + "note: blob.py: contains a nul byte\n"
