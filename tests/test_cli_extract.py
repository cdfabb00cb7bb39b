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
    assert result.code == 2
    assert result.stderr.startswith(f"error: {FIXTURES}: no functions in a supported language: ")


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
        "0 functions in 1 file (1 unsupported)\n"
    )
    assert db.counts() == before


def test_tree_options_need_a_tree(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text('{"id": "a", "text": "read"}\n')
    result = cli(["load", "x", str(src), "--lang", "python"])
    assert result.code == 2 and "apply to a source tree" in result.stderr


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
    assert "1 functions with words too long to index" in result.stderr


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
