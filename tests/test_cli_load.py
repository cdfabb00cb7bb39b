"""`riido-pg load`: the three source shapes, idempotence, --replace, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from support.cli import run_on_terminal
from support.corpus import write_jsonl
from support.sessions import WAIT

DOCS = [
    {"id": "read", "text": "def read_config(path): return open(path).read()"},
    {"id": "write", "text": "def writeConfig(path, data): open(path, 'w').write(data)"},
    {"id": "parse", "text": "def parseHTTPResponse(raw): return raw.split()"},
]


def _ranked(cli: Any, snapshot: str, query: str) -> list[str]:
    out = cli(["query", snapshot, query])
    assert out.code == 0, out.stderr
    return [c["id"] for c in json.loads(out.stdout)["candidates"]]


def test_load_jsonl_then_query(cli: Any, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "docs.jsonl", DOCS)
    result = cli(["load", "cfg-jsonl", str(src)])
    assert (result.code, result.stdout, result.stderr) == (
        0,
        "loaded snapshot 'cfg-jsonl' (3 documents)\n",
        "",
    )
    assert _ranked(cli, "cfg-jsonl", "read config")[0] == "read"


def test_load_json_request_file(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "req.json"
    src.write_text(json.dumps({"snapshot_id": "cfg-json", "query": "q", "documents": DOCS}))
    result = cli(["load", "cfg-json", str(src), "--fresh"])  # self-contained: no base named
    assert result.code == 0, result.stderr
    assert result.stdout == "loaded snapshot 'cfg-json' (3 documents)\n"


def test_load_json_request_file_naming_another_snapshot_is_refused(
    cli: Any, db: Any, tmp_path: Path
) -> None:
    src = tmp_path / "req.json"
    src.write_text(json.dumps({"snapshot_id": "x", "query": "q", "documents": DOCS}))
    before = db.counts()
    result = cli(["load", "other-id", str(src)])
    assert (result.code, result.stdout, result.stderr) == (
        2,
        "",
        f"error: {src}: the file is for snapshot 'x', not 'other-id'; load it under the id "
        "it names, or remove its snapshot_id\n",
    )
    assert db.counts() == before


def test_load_json_request_file_without_snapshot_id(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "req.json"
    src.write_text(json.dumps({"documents": DOCS}))
    result = cli(["load", "cfg-json-any", str(src)])
    assert result.code == 0, result.stderr


def test_one_document_is_counted_in_the_singular(cli: Any, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "one.jsonl", DOCS[:1])
    result = cli(["load", "cfg-one", str(src)])
    assert (result.code, result.stdout) == (0, "loaded snapshot 'cfg-one' (1 document)\n")


def test_load_beir_directory(cli: Any, tmp_path: Path) -> None:
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d["id"], "text": d["text"], "title": ""}) + "\n" for d in DOCS)
    )
    result = cli(["load", "cfg-beir", str(beir)])
    assert result.code == 0, result.stderr
    assert _ranked(cli, "cfg-beir", "parse http response")[0] == "parse"


def test_same_content_is_a_noop_and_different_content_needs_replace(
    cli: Any, db: Any, tmp_path: Path
) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", DOCS)
    assert cli(["load", "idem", str(src)]).code == 0
    # same documents in another order: identical content
    again = cli(["load", "idem", str(write_jsonl(tmp_path / "b.jsonl", DOCS[::-1]))])
    assert (again.code, again.stdout) == (0, "unchanged: snapshot 'idem' (3 documents)\n")
    changed = write_jsonl(tmp_path / "c.jsonl", [*DOCS, {"id": "new", "text": "read config new"}])
    refused = cli(["load", "idem", str(changed)])
    assert refused.code == 2
    assert refused.stderr == (
        "error: snapshot 'idem' exists with different content; pass --replace to replace it\n"
    )
    assert _ranked(cli, "idem", "read") == ["read", "parse", "write"]
    replaced = cli(["load", "idem", str(changed), "--replace"])
    assert (replaced.code, replaced.stdout) == (
        0,
        "replaced snapshot 'idem' (4 documents) on its previous version: +1 −0\n",
    )
    assert set(_ranked(cli, "idem", "read")) == {"read", "write", "parse", "new"}


def test_bad_sources_fail_with_one_line_and_store_nothing(
    cli: Any, db: Any, tmp_path: Path
) -> None:
    before = db.count("snapshots")
    cases = {
        "missing.jsonl": None,
        "bad.jsonl": b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n',
        "dup.jsonl": b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
        "noid.jsonl": b'{"text": "x"}\n',
        "notext.jsonl": b'{"id": "a"}\n',
        "nul.jsonl": b'{"id": "a", "text": "x\\u0000y"}\n',
        "surrogate.jsonl": b'{"id": "a", "text": "\\ud800"}\n',
        "latin1.jsonl": b'{"id": "a", "text": "caf\xe9"}\n',
        "empty.jsonl": b"",
        "docs.txt": b"hello",
    }
    expected = {
        "missing.jsonl": "missing.jsonl: no such file or directory",
        "bad.jsonl": "bad.jsonl: line 2: malformed JSON",
        "dup.jsonl": "duplicate document id 'a'",
        "noid.jsonl": 'noid.jsonl: line 1: document has no "id"',
        "notext.jsonl": "notext.jsonl: line 1: document 'a' has no \"text\"",
        "nul.jsonl": "nul.jsonl: line 1: document 'a' text contains a NUL character",
        "surrogate.jsonl": "line 1: document 'a' text contains a lone surrogate",
        "latin1.jsonl": "latin1.jsonl: line 1: invalid UTF-8",
        "empty.jsonl": "empty.jsonl: no documents",
        "docs.txt": "expected a .json file, a .jsonl file, a BEIR directory or a source directory",
    }
    for name, data in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        result = cli(["load", "bad-" + name.split(".")[0], str(path)])
        assert result.code == 2, (name, result)
        assert result.stdout == ""
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, name
        assert expected[name] in result.stderr, (name, result.stderr)
    assert db.count("snapshots") == before


def test_unknown_text_config(cli: Any, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "d.jsonl", DOCS)
    result = cli(["load", "tc", str(src), "--text-config", "klingon"])
    assert result.code == 2
    # the configurations the server has, not a query to find them
    assert result.stderr.startswith(
        "error: unknown text search configuration 'klingon'; choose among: arabic, "
    )
    assert ", english, " in result.stderr and ", simple, " in result.stderr
    assert "pg_ts_config" not in result.stderr and result.stderr.count("\n") == 1


def test_progress_bar_on_a_terminal(db: Any, tmp_path: Path) -> None:
    """With stderr on a terminal, load draws a progress bar there (and only there)."""
    src = write_jsonl(
        tmp_path / "many.jsonl",
        [{"id": f"d{i}", "text": f"read config {i}"} for i in range(20_000)],
    )
    env = {"COLUMNS": "100", "TERM": "xterm"}
    run = run_on_terminal(["load", "bar", str(src)], dsn=db.dsn, env=env, timeout=WAIT)
    seen = run.terminal
    assert run.code == 0
    assert run.piped == b"loaded snapshot 'bar' (20000 documents)\n"
    # rich redraws about ten times a second: each phase is on screen with its spinner
    # and clock, the streamed one with its rate in documents per second
    # what the user gets, not PostgreSQL's words for it
    assert b"reading documents, indexing their words" in seen
    assert b"building the index" in seen
    assert b"tsvector" not in seen and b"postings" not in seen
    assert re.search(rb"\d/s", seen)
    assert b"error" not in seen


def test_load_names_the_base_it_chose_and_the_difference(cli: Any, tmp_path: Path) -> None:
    """`loaded ...` says the base and the documents added / left out. An edit that adds
    a line shifts the ids (they end with the line of the name) of every function below
    it in that file: each counts as changed (docs/specification.md, "What counts as
    changed")."""
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "other.py").write_text("".join(f"def k{i}():\n    return {i}\n\n" for i in range(20)))
    (tree / "a.py").write_text("".join(f"def {f}():\n    return {f!r}\n\n" for f in "fgh"))
    first = cli(["load", "edit-1", str(tree)])
    assert (first.code, first.stdout) == (0, "loaded snapshot 'edit-1' (23 documents)\n")
    (tree / "a.py").write_text(
        (tree / "a.py").read_text().replace("return 'f'", "x = 1\n    return x")
    )
    second = cli(["load", "edit-2", str(tree)])  # f edited; g and h one line lower
    assert (second.code, second.stdout) == (
        0,
        "loaded snapshot 'edit-2' (23 documents) on base 'edit-1': +3 −3\n",
    )
    (tree / "other.py").write_text((tree / "other.py").read_text() + "def k20():\n    pass\n")
    third = cli(["load", "edit-3", str(tree)])  # a function added at the end: one more
    assert (third.code, third.stdout) == (
        0,
        "loaded snapshot 'edit-3' (24 documents) on base 'edit-2': +1 −0\n",
    )
