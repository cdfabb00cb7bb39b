"""Hostile JSON and out-of-range numbers in every input riido-pg reads: one `error:` line,
exit 2, nothing stored (issue 27, item 10) — never a RecursionError or ValueError."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import Cli
from support.corpus import small, write_beir
from support.database import Database
from support.gitrepos import Repo
from support.histories import history_corpus, history_repo

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.errors import InvalidCorpus, InvalidInput
from riido_pg.evaluation.beir import MAX_SCORE, read_beir
from riido_pg.jsontext import MAX_DEPTH, _deeper_than, _may_nest_deeper, read_json

DIGITS = sys.get_int_max_str_digits()
#: Far deeper than the interpreter's recursion limit.
DEEP = "[" * 100_000 + "]" * 100_000
BIG = "9" * (DIGITS + 1)


def nested(depth: int) -> Any:
    value: Any = []
    for i in range(depth - 1):
        value = [value] if i % 2 else {"k": value}
    return value


@given(st.integers(min_value=1, max_value=MAX_DEPTH + 40))
def test_depth_up_to_the_limit_reads_and_no_further(depth: int) -> None:
    text = json.dumps(nested(depth))
    if depth <= MAX_DEPTH:
        assert read_json(text, "x") == nested(depth)
    else:
        with pytest.raises(InvalidInput, match=f"^x: JSON nested more than {MAX_DEPTH} levels"):
            read_json(text, "x")


#: Any JSON value, with strings full of brackets (which nest nothing).
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet='[]{}\\"ab\u00e9 ', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="[{a", max_size=3), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(JSON_VALUES, st.integers(min_value=0, max_value=8), st.booleans())
def test_a_value_the_bracket_count_lets_through_is_never_too_deep(
    value: Any, limit: int, ascii_only: bool
) -> None:
    """The walk ``read_json`` skips when the text holds few brackets would have found
    nothing: whatever the value, the separators and the escaping."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    if _deeper_than(value, limit):
        assert _may_nest_deeper(text, limit)
    compact = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)
    if _deeper_than(json.loads(compact), limit):
        assert _may_nest_deeper(compact, limit)


def test_a_bare_value_reads_as_itself() -> None:
    """A number, null, boolean or string alone nests nothing (the depth walk once
    iterated it: a TypeError)."""
    for text, value in (("5", 5), ("null", None), ("true", True), ("-1.5", -1.5), ('"[{"', "[{")):
        assert read_json(text, "x") == value
        assert not _deeper_than(value, 0)


@given(st.integers(min_value=1, max_value=DIGITS + 50), st.booleans())
def test_integers_up_to_the_interpreter_limit_read_and_no_longer(digits: int, neg: bool) -> None:
    text = ("-" if neg else "") + "7" * digits
    if digits <= DIGITS:
        assert read_json(f"[{text}]", "x") == [int(text)]
    else:
        with pytest.raises(InvalidInput, match=f"^x: a JSON integer has more than {DIGITS:,}"):
            read_json(f"[{text}]", "x")


def test_every_failure_is_the_callers_class() -> None:
    for text in (DEEP, f'{{"n": {BIG}}}', "{", "[1,]"):
        with pytest.raises(InvalidCorpus):
            read_json(text, "f", error=InvalidCorpus)
    with pytest.raises(InvalidInput, match=r"^f: line 2: malformed JSON"):
        read_json("[\n,]", "f")
    with pytest.raises(InvalidInput, match=r"^f: line 9: malformed JSON"):
        read_json("[\n,]", "f: line 9", one_line=True)


def one_error(result: Any, *fragments: str) -> str:
    assert (result.code, result.stdout) == (2, ""), result
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    return str(result.stderr)


HOSTILE = {"deep": (DEEP, "nested more than"), "big": (BIG, "integer has more than")}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_load_json_and_jsonl(cli: Cli, db: Database, tmp_path: Path, kind: str) -> None:
    value, message = HOSTILE[kind]
    before = db.counts()
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(
        '{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "metadata": ' + value + "}\n"
    )
    one_error(cli(["load", "s1", str(jsonl)]), f"{jsonl}: line 2: ", message)
    request = tmp_path / "d.json"
    request.write_text('{"documents": [{"id": "a", "text": "x", "metadata": ' + value + "}]}")
    one_error(cli(["load", "s2", str(request)]), f"{request}: ", message)
    assert db.counts() == before


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hints_request_and_hints_file(cli: Cli, db: Database, tmp_path: Path, kind: str) -> None:
    value, message = HOSTILE[kind]
    docs = '[{"id": "a", "text": "read"}]'
    hostile = '{"snapshot_id": "s", "query": "read", "documents": ' + docs + ', "x": ' + value + "}"
    one_error(cli(["hints"], input=hostile.encode()), "stdin: ", message)
    hints = tmp_path / "hints.json"
    hints.write_text(f'["a", {value}]')
    good = json.dumps({"snapshot_id": "s", "query": "read", "documents": json.loads(docs)})
    one_error(cli(["hints", "--hints-file", str(hints)], input=good), f"{hints}: ", message)
    assert db.count("snapshots") == 0


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_eval_of_a_beir_directory(cli: Cli, db: Database, tmp_path: Path, kind: str) -> None:
    value, message = HOSTILE[kind]
    before = db.counts()
    beir = small(tmp_path / "beir")
    queries = beir / "queries.jsonl"
    queries.write_text(queries.read_text() + '{"_id": "q9", "text": "x", "n": ' + value + "}\n")
    one_error(cli(["eval", str(beir)]), f"{queries}: line 5: ", message)
    assert db.counts() == before


def _rewrite(corpus: Path, name: str, text: str) -> None:
    """Replace a history corpus file and its checksum in the manifest."""
    (corpus / name).write_text(text)
    manifest = json.loads((corpus / "history.json").read_text())
    manifest["files"][name] = hashlib.sha256(text.encode()).hexdigest()
    (corpus / "history.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_eval_of_a_history_corpus(cli: Cli, db: Database, tmp_path: Path, kind: str) -> None:
    value, message = HOSTILE[kind]
    before = db.counts()
    repo = history_repo(tmp_path / "repo")
    corpus = history_corpus(repo, tmp_path / "corpus", name="h")
    manifest_text = (corpus / "history.json").read_text()
    queries = corpus / "queries.jsonl"
    lines = queries.read_text().splitlines(keepends=True)
    question = json.loads(lines[1])
    _rewrite(corpus, "queries.jsonl", lines[0] + lines[1][:-2] + ', "n": ' + value + "}\n")
    assert question["_id"]
    one_error(cli(["eval", str(corpus)]), f"{queries}: line 2: ", message)
    manifest = corpus / "history.json"
    manifest.write_text(manifest_text[:-2] + ', "n": ' + value + "}\n")
    one_error(cli(["eval", str(corpus)]), f"{manifest}: ", message)
    assert db.counts() == before
    assert isinstance(repo, Repo)


TOO_BIG = ((str(2**63), "at most 9,223,372,036,854,775,807"), ("9" * 5000, "a whole number"))


def test_limit_beyond_bigint(cli: Cli, db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "lim", [Document("a", "read config"), Document("b", "write")])
        with pytest.raises(InvalidInput, match="limit must be from 1 to"):
            rank_snapshot(conn, "lim", "read", limit=2**63)
        assert [c.id for c in rank_snapshot(conn, "lim", "read", limit=2**63 - 1).candidates] == [
            "a",
            "b",
        ]
    request = json.dumps(
        {"snapshot_id": "s", "query": "read", "documents": [{"id": "a", "text": "x"}]}
    )
    for args, stdin in ((["query", "lim", "read"], None), (["hints"], request)):
        for too_big, says in TOO_BIG:
            one_error(cli([*args, "--limit", too_big], input=stdin), f"--limit must be {says}")
        ok = cli([*args, "--limit", str(2**63 - 1)], input=stdin)
        assert ok.code == 0, ok


def test_qrels_score_beyond_integer(cli: Cli, db: Database, tmp_path: Path) -> None:
    def corpus(name: str, score: int) -> Path:
        return write_beir(
            tmp_path / name,
            [{"_id": "d1", "text": "read config"}, {"_id": "d2", "text": "write"}],
            [{"_id": "q1", "text": "read"}],
            [("q1", "d1", score)],
        )

    assert read_beir(corpus("top", MAX_SCORE)).questions[0].targets == (("d1", MAX_SCORE),)
    before = db.counts()
    for score in (MAX_SCORE + 1, 10**30):
        where = tmp_path / f"s{score}"
        corpus(where.name, score)
        one_error(cli(["eval", str(where)]), f"line 2: score {score} is above {MAX_SCORE}")
    assert db.counts() == before
