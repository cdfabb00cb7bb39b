"""What the MCP tools answer, without the SDK: a function's location told from its id
and text (against the extraction's own metadata), snippets and their bounds, the
answer's shape, and the façade's ``search`` (a ranking and its texts) on a real database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from riido_pg import Database, Document, load_snapshot, rank_snapshot
from riido_pg.agents.answers import MAX_LINE, search_answer, snippet_lines
from riido_pg.errors import SnapshotNotFound
from riido_pg.extract import iter_functions
from riido_pg.extract.locations import function_id, locate

ROOT = Path(__file__).parent.parent
TREES = [ROOT / "tests" / "fixtures" / "extract", ROOT / "riido_pg"]

paths = st.text(st.characters(blacklist_characters="\n", codec="utf-8"), min_size=1, max_size=30)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
leading = st.lists(
    st.sampled_from(
        [
            "# a comment",
            "@decorator",
            "// note",
            "/** doc",
            " * more",
            "#[attr]",
            # a decorator whose arguments run over lines and name the function
            '@deprecated(\n    "{name} is old (use [x",\n    since={name},\n)',
        ]
    ),
    max_size=4,
)
body = st.lists(st.sampled_from(["    return 1", "  x = y", "}", ""]), max_size=6).filter(
    lambda lines: not lines or lines[-1] != ""  # a text never ends with a blank line
)


@given(paths, st.lists(names, min_size=1, max_size=3), st.integers(1, 10**6), st.integers(1, 5))
def test_an_id_gives_path_and_line(path: str, parts: list[str], line: int, count: int) -> None:
    doc_id = function_id(path, ".".join(parts), line, count)
    where = locate(doc_id, f"def {parts[-1]}():\n    pass\n")
    assert where is not None
    assert (where.path, where.start_line, where.end_line, where.offset) == (path, line, line + 1, 0)


@given(names, leading, body, st.integers(1, 1000), st.booleans())
def test_the_name_line_is_found_past_the_leading_block(
    name: str, lead: list[str], rest: list[str], line: int, newline: bool
) -> None:
    above = "\n".join(lead).format(name=name).split("\n") if lead else []
    text = "\n".join([*above, f"def {name}(x):", *rest]) + ("\n" if newline else "")
    where = locate(function_id("a/b.py", f"C.{name}", line), text)
    assert where is not None
    assert where.offset == len(above)
    assert where.end_line == line + len(rest)


@pytest.mark.parametrize("doc_id", ["doc42", "a.py:f", "a.py:f:0", "a.py:f:x", "a.py:f:3#0", ""])
def test_other_ids_have_no_location(doc_id: str) -> None:
    assert locate(doc_id, "def f():\n    pass") is None


def test_locations_agree_with_the_extraction() -> None:
    """Path and line always; the last line for all but a few wrapped expressions."""
    functions = [f for tree in TREES for f in iter_functions(tree)]
    misses = 0
    for f in functions:
        where = locate(f.id, f.text)
        assert where is not None
        assert (where.path, where.start_line) == (f.metadata["path"], f.metadata["start_line"])
        assert where.start_line <= where.end_line
        misses += where.end_line != f.metadata["end_line"]
    assert len(functions) > 1000
    assert misses <= len(functions) // 100


def test_snippets_are_bounded() -> None:
    text = "a\n" + "b" * (MAX_LINE + 5) + "\nc\nd"
    assert snippet_lines(text, 1, 2) == "b" * (MAX_LINE - 1) + "…\nc"
    assert snippet_lines(text, 3, 5) == "d"
    assert snippet_lines(text, 0, 0) == ""


DOCS = [
    Document("m.py:parse_config:1", "# reads it\ndef parse_config(path):\n    return path\n"),
    Document("m.py:render:9", "def render(button):\n    return button"),
    Document("doc42", "a document without a location"),
]


@pytest.fixture
def stored(conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
    load_snapshot(conn, "texts-a", DOCS, replace=True)
    load_snapshot(conn, "texts-b", DOCS[1:], base="texts-a", replace=True)
    return conn


def test_search_answers_the_ranking_and_its_texts(stored: psycopg.Connection[Any]) -> None:
    texts = {d.id: d.text for d in DOCS}
    for snapshot, held in [("texts-a", DOCS), ("texts-b", DOCS[1:])]:
        for query, limit in [("parse config render document", 10), ("button", 1)]:
            found = Database(stored).search(snapshot, query, policy="bm25", limit=limit)
            assert found.ranking == rank_snapshot(stored, snapshot, query, limit=limit)
            assert found.texts == {c.id: texts[c.id] for c in found.ranking.candidates}
            assert found.ranking.total == len(held)
    with pytest.raises(SnapshotNotFound):
        Database(stored).search("nope", "x", policy="bm25", limit=10)


def test_an_answer_carries_locations_and_snippets(stored: psycopg.Connection[Any]) -> None:
    found = Database(stored).search(
        "texts-a", "parse config render document", policy="bm25", limit=3
    )
    ranking, texts = found.ranking, found.texts
    answer = search_answer(ranking, texts, 1)
    assert answer["total"] == 3 and answer["snapshot"] == "texts-a"
    by_id = {c["id"]: c for c in answer["candidates"]}
    assert [c["id"] for c in answer["candidates"]] == [c.id for c in ranking.candidates]
    assert by_id["m.py:parse_config:1"] | {"rank": 0, "bm25_score": 0} == {
        "id": "m.py:parse_config:1",
        "rank": 0,
        "bm25_score": 0,
        "path": "m.py",
        "start_line": 1,
        "end_line": 2,
        "snippet": "def parse_config(path):",
    }
    assert by_id["doc42"]["snippet"] == "a document without a location"
    assert "path" not in by_id["doc42"]
    assert "snippet" not in search_answer(ranking, texts, 0)["candidates"][0]
