"""`riido-pg query`: policies, --limit, --format, hints files, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import DEFAULT_TIMEOUT, cli_env

from riido_pg import Document, load_snapshot
from riido_pg.ranking import evaluated_policies

DOCS = [
    Document("cfg.read", "def read(path):\n    return open(path).read()"),
    Document("cfg.load", "def loadConfig(path):\n    return ReadConfig(path)"),
    Document(
        "cfg.parse", "def parse_config(text):\n    return dict(line.split('=') for line in text)"
    ),
    Document("net.get", "def getHTTPResponseCode(url):\n    return urlopen(url).status"),
    Document("net.serve", "def ServeHTTP(handler):\n    handler.serve_forever()"),
    Document("misc", "def nothing():\n    pass"),
]
#: The policies that need nothing but the query (no hints file), from the registry.
POLICIES = evaluated_policies()


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "q", DOCS)


def _json(result: Any) -> Any:
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_ranks_every_document_once(cli: Any, policy: str) -> None:
    body = _json(cli(["query", "q", "read config", "--policy", policy]))
    assert body["policy"] == policy and body["status"] == "unverified"
    assert sorted(c["id"] for c in body["candidates"]) == sorted(d.id for d in DOCS)
    assert [c["rank"] for c in body["candidates"]] == list(range(1, len(DOCS) + 1))
    keys = {"id", "rank", "bm25_score", "identifier_bm25_score", "fused_score", "rrf_score"}
    keys |= {"structure_score", "name_bm25_score"}
    assert all(set(c) <= keys for c in body["candidates"])


def test_identifier_hints_keep_the_baseline_first(cli: Any) -> None:
    base = _json(cli(["query", "q", "read config"]))
    hinted = _json(cli(["query", "q", "read config", "--identifier-hints"]))
    assert hinted["policy"] == "identifier_bm25_baseline_first"
    assert hinted["candidates"][0]["id"] == base["candidates"][0]["id"]
    # bm25_score is the raw-column score whatever the policy
    raw = {c["id"]: c["bm25_score"] for c in base["candidates"]}
    assert {c["id"]: c["bm25_score"] for c in hinted["candidates"]} == raw
    # cfg.load only matches after splitting loadConfig / ReadConfig
    ident = _json(cli(["query", "q", "read config", "--policy", "identifier_bm25"]))
    assert ident["candidates"][0]["id"] == "cfg.load"


@pytest.mark.parametrize("policy", POLICIES)
def test_limit_gives_the_first_k(cli: Any, policy: str) -> None:
    full = _json(cli(["query", "q", "http response code", "--policy", policy]))
    for k in (1, 2, 4):
        part = _json(
            cli(["query", "q", "http response code", "--policy", policy, "--limit", str(k)])
        )
        assert part["candidates"] == full["candidates"][:k]


def test_hints_file(cli: Any, tmp_path: Path) -> None:
    hints = tmp_path / "hints.json"
    hints.write_text(json.dumps(["misc", "net.serve"]))
    base = _json(cli(["query", "q", "read"]))
    body = _json(cli(["query", "q", "read", "--hints-file", str(hints)]))
    assert body["policy"] == "external_hints_baseline_first"
    ids = [c["id"] for c in body["candidates"]]
    assert ids[:2] == [base["candidates"][0]["id"], "misc"]
    assert ids.index("net.serve") == 3


def test_hints_file_errors(cli: Any, tmp_path: Path) -> None:
    unknown = tmp_path / "u.json"
    unknown.write_text('["misc", "nope"]')
    result = cli(["query", "q", "read", "--hints-file", str(unknown)])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == ("error: hints name 1 document(s) not in snapshot 'q', e.g. 'nope'\n")
    notlist = tmp_path / "n.json"
    notlist.write_text('{"a": 1}')
    result = cli(["query", "q", "read", "--hints-file", str(notlist)])
    assert result.code == 2
    assert "a hints file must be a JSON array of document ids" in result.stderr


def test_table_format(cli: Any) -> None:
    result = cli(["query", "q", "read config", "--format", "table", "--limit", "2"])
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "q · bm25 · unverified" in lines[0]
    assert any("cfg.read" in line for line in lines)
    assert sum("cfg." in line or "net." in line or "misc" in line for line in lines) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["query", "nope", "x"],
            "error: no snapshot 'nope'; load one with `riido-pg load nope SOURCE`\n",
        ),
        (
            ["query", "q", "x", "--policy", "bm26"],
            "error: unknown policy 'bm26'; choose one of bm25, identifier_bm25, "
            "identifier_bm25_baseline_first, identifier_bm25_auxiliary_first, "
            "identifier_bm25_fused, identifier_bm25_rrf, structure_bm25, "
            "external_hints_baseline_first, model_hints_baseline_first, "
            "model_structure_weighted\n",
        ),
        (
            ["query", "q", "x", "--policy", "bm25_identifier_input_out_of_scope"],
            "error: bm25_identifier_input_out_of_scope is a result label, "
            "not a policy to ask for\n",
        ),
        (
            ["query", "q", "x", "--identifier-hints", "--policy", "bm25"],
            "error: --identifier-hints means identifier_bm25_baseline_first; "
            "it cannot be used with --policy bm25\n",
        ),
        (
            ["query", "q", "x", "--policy", "external_hints_baseline_first"],
            "error: --policy external_hints_baseline_first needs --hints-file FILE\n",
        ),
        (["query", "q", "x", "--limit", "0"], None),
        (["query", "q", "x", "--format", "xml"], None),
    ],
)
def test_usage_errors_exit_2_with_one_line(cli: Any, args: list[str], message: str | None) -> None:
    result = cli(args)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    if message is not None:
        assert result.stderr == message


@pytest.mark.parametrize("query", ["!!! ???", "the and of", ""])
def test_no_searchable_words_falls_back_to_bm25_under_the_label(cli: Any, query: str) -> None:
    body = _json(cli(["query", "q", query, "--identifier-hints"]))
    assert body["policy"] == "bm25_identifier_input_out_of_scope"
    plain = _json(cli(["query", "q", query]))
    assert body["candidates"] == plain["candidates"]
    # every document scores 0, so the order is the id byte order
    assert [c["id"] for c in plain["candidates"]] == sorted(d.id for d in DOCS)


def test_overlong_identifier_query_falls_back(cli: Any) -> None:
    query = " ".join(f"word{i}x" for i in range(400))
    body = _json(cli(["query", "q", query, "--policy", "identifier_bm25"]))
    assert body["policy"] == "bm25_identifier_input_out_of_scope"


LONG_ID = "beir-4da654ca97b8d464-english/" + "a-very-long-document-id" * 4


def test_table_never_cuts_ids(db: Any, cli: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "long-ids", [Document(LONG_ID, "read config"), Document("x", "y")])
    result = cli(["query", "long-ids", "read config", "--format", "table"])
    assert result.code == 0, result.stderr
    assert LONG_ID in result.stdout  # piped: the table is as wide as it needs
    listed = cli(["snapshots", "list"])
    assert listed.code == 0 and "long-ids" in listed.stdout


def test_table_shows_the_first_10_and_says_how_many_more(db: Any, cli: Any) -> None:
    """A table and the JSON alike: the first 10 unless --limit N or --all; the JSON's
    `total` counts every candidate."""
    with db.connect() as conn:
        load_snapshot(conn, "many", [Document(f"d{i:03d}", f"read {i}") for i in range(45)])
    result = cli(["query", "many", "read", "--format", "table"])
    assert result.code == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if " d0" in line]
    assert len(rows) == 10
    assert "35 more candidates not shown; --limit N shows the first N, --all every one" in " ".join(
        result.stdout.split()
    )
    limited = cli(["query", "many", "read", "--format", "table", "--limit", "30"])
    assert len([line for line in limited.stdout.splitlines() if " d0" in line]) == 30
    assert "not shown" not in limited.stdout  # the caller chose N
    every = cli(["query", "many", "read", "--format", "table", "--all"])
    assert len([line for line in every.stdout.splitlines() if " d0" in line]) == 45
    assert "not shown" not in every.stdout
    full = _json(cli(["query", "many", "read", "--all"]))
    assert len(full["candidates"]) == 45 and full["total"] == 45
    piped = _json(cli(["query", "many", "read"]))  # piped: the same first 10, and the total
    assert piped == {**full, "candidates": full["candidates"][:10]}
    first = _json(cli(["query", "many", "read", "--limit", "30"]))
    assert first == {**full, "candidates": full["candidates"][:30]}
    assert _json(cli(["query", "many", "read", "--format", "json"])) == piped
    both = cli(["query", "many", "read", "--all", "--limit", "3"])
    assert (both.code, both.stderr) == (2, "error: --limit and --all cannot be used together\n")


@pytest.mark.parametrize("query", ["", "   ", "the of and"])
def test_no_searchable_words_is_said_on_stderr(cli: Any, query: str) -> None:
    result = cli(["query", "q", query])
    assert result.code == 0
    assert result.stderr == (
        "note: the query has no searchable words (empty, or only stop words for this text "
        "configuration): every document scores 0 and they follow in id order\n"
    )
    body = json.loads(result.stdout)
    assert [c["bm25_score"] for c in body["candidates"]] == [0.0] * len(DOCS)
    assert [c["id"] for c in body["candidates"]] == sorted(d.id for d in DOCS)


def test_a_searchable_query_has_no_note(cli: Any) -> None:
    assert cli(["query", "q", "read config"]).stderr == ""


def test_usage_names_arguments_consistently(cli: Any) -> None:
    # one placeholder style: upper-case names, no braces, no type labels
    for args, usage in (
        (["query", "--help"], "Usage: riido-pg query [OPTIONS] SNAPSHOT QUERY"),
        (["load", "--help"], "Usage: riido-pg load [OPTIONS] SNAPSHOT [SOURCE]"),
        (["snapshots", "drop", "--help"], "Usage: riido-pg snapshots drop [OPTIONS] SNAPSHOT"),
    ):
        result = cli(args)
        assert result.code == 0 and usage in result.stdout, result.stdout


def test_query_argument_that_is_not_utf8(db: Any) -> None:
    """A real process: the bytes of its command line decoded by the interpreter."""
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"riido_pg", b"query", b"q", b"read \xff config"],
        capture_output=True,
        env=cli_env(db.dsn),
        check=False,
        timeout=DEFAULT_TIMEOUT,
    )
    assert (proc.returncode, proc.stderr) == (2, b"error: query is not valid UTF-8\n")
