"""Streamed loads (README "Loading at size"): bad input found late in a large file
(malformed JSON, a duplicate id, a text PostgreSQL cannot index) or late in a table
fails with one line naming it and stores nothing (no snapshot row, no shared texts,
nothing pending), with one connection or several; the content of a snapshot does not
depend on the order of its input or on ``--jobs``, and a refused change stores
nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.corpus import write_jsonl
from support.database import Database

N = 100_050
BAD_LINE = 100_001  # past the first 100,000 documents (50 chunks)
UNREFERENCED = (
    "SELECT count(*) FROM riido.texts AS t "
    "WHERE NOT EXISTS (SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)"
)


def _line(i: int) -> str:
    # tiny texts, 1,000 of them distinct: the load stays fast and still indexes texts
    return json.dumps({"id": f"d{i:06d}", "text": f"t{i % 1000} x"}) + "\n"


@pytest.fixture(scope="module")
def big() -> list[str]:
    return [_line(i) for i in range(N)]


def _scalar(db: Database, query: str) -> Any:
    with db.connect() as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_malformed_line_after_100000_documents_stores_nothing(
    cli: Any, db: Database, tmp_path: Path, big: list[str], jobs: str
) -> None:
    lines = list(big)
    lines[BAD_LINE - 1] = '{"id": "d100000", "text": \n'
    path = tmp_path / "late.jsonl"
    path.write_text("".join(lines))
    before = db.counts()
    result = cli(["load", "late", str(path), "--jobs", jobs])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {path}: line {BAD_LINE}: malformed JSON: Expecting value\n"
    ), result.stderr
    assert db.counts() == before


def test_duplicate_id_late_in_the_file_stores_nothing(
    cli: Any, db: Database, tmp_path: Path, big: list[str]
) -> None:
    """The texts of the first 100,000 documents were committed by the workers: they
    go again."""
    lines = list(big)
    lines[N - 10] = json.dumps({"id": "d000004", "text": "late duplicate"}) + "\n"
    path = tmp_path / "dup.jsonl"
    path.write_text("".join(lines))
    before = db.counts()
    result = cli(["load", "dup", str(path), "--jobs", "2"])
    assert (result.code, result.stdout, result.stderr) == (
        2,
        "",
        f"error: {path}: duplicate document id 'd000004'\n",
    )
    assert db.counts() == before


DOCS = [
    {"id": f"f{i:03d}", "text": f"def read_{i % 7}(path): return parse(path, {i % 5})"}
    for i in range(40)
]


def test_order_and_jobs_do_not_change_the_content(cli: Any, db: Database, tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", DOCS)
    shuffled = write_jsonl(tmp_path / "b.jsonl", DOCS[::-1][5:] + DOCS[::-1][:5])
    loaded = cli(["load", "order", str(src), "--jobs", "1"])
    assert (loaded.code, loaded.stdout) == (0, "loaded snapshot 'order' (40 documents)\n")
    before = db.counts()
    for path, jobs in ((src, "2"), (shuffled, "1"), (shuffled, "2")):
        again = cli(["load", "order", str(path), "--jobs", jobs])
        assert (again.code, again.stdout, again.stderr) == (
            0,
            "unchanged: snapshot 'order' (40 documents)\n",
            "",
        ), (path.name, jobs)
        assert db.counts() == before
    # loaded with two jobs in the first place: the same digest
    other = cli(["load", "order2", str(shuffled), "--jobs", "2"])
    assert other.code == 0, other.stderr
    with db.connect() as conn:
        digests = conn.execute(
            "SELECT content_digest FROM riido.snapshots WHERE snapshot_id IN ('order', 'order2')"
        ).fetchall()
    assert len(digests) == 2 and digests[0] == digests[1]
    assert cli(["snapshots", "drop", "order2"]).code == 0


@pytest.mark.parametrize(
    ("change", "jobs"),
    [("text", "1"), ("added", "2"), ("renamed", "2")],
)
def test_a_refused_change_stores_nothing(
    cli: Any, db: Database, tmp_path: Path, jobs: str, change: str
) -> None:
    docs = [dict(d) for d in DOCS]
    if change == "text":
        docs[17]["text"] = "def brand_new_text(): pass"
    elif change == "added":
        docs.append({"id": "f999", "text": "def another_new_text(): pass"})
    else:
        docs[9]["id"] = "f009-renamed"
    first = cli(["load", "refuse", str(write_jsonl(tmp_path / "a.jsonl", DOCS)), "--fresh"])
    assert first.code == 0 and first.stdout.endswith("snapshot 'refuse' (40 documents)\n")
    before = db.counts()
    changed = write_jsonl(tmp_path / "changed.jsonl", docs)
    refused = cli(["load", "refuse", str(changed), "--jobs", jobs])
    assert (refused.code, refused.stdout, refused.stderr) == (
        2,
        "",
        "error: snapshot 'refuse' exists with different content; pass --replace to replace it\n",
    )
    assert db.counts() == before  # the new text is not kept, nothing pending
    assert _scalar(db, UNREFERENCED) == 0


def test_a_text_postgresql_cannot_index_late_in_the_file_stores_nothing(
    cli: Any, db: Database, tmp_path: Path
) -> None:
    """Found by a worker in the fourth chunk: the one line of a load on one connection
    (tests/test_limits.py)."""
    docs = [{"id": f"w{i:05d}", "text": f"def word_{i}(): pass"} for i in range(7_000)]
    docs[6_500]["text"] = "ok " + "x" * 3_000
    path = write_jsonl(tmp_path / "long.jsonl", docs)
    before = db.counts()
    result = cli(["load", "long", str(path), "--jobs", "2"])
    assert (result.code, result.stdout, result.stderr) == (
        2,
        "",
        "error: document 'w06500' has a word of more than 2047 bytes, which PostgreSQL "
        "cannot index\n",
    )
    assert db.counts() == before


def test_a_bad_row_late_in_a_table_stores_nothing(cli: Any, db: Database) -> None:
    with db.connect() as conn:
        conn.execute("DROP TABLE IF EXISTS public.late_rows")
        conn.execute(
            "CREATE TABLE public.late_rows AS SELECT 'r' || lpad(i::text, 5, '0') AS id, "
            "CASE WHEN i = 6500 THEN NULL ELSE 'def row_' || i || '(): pass' END AS text "
            "FROM generate_series(0, 6999) AS i ORDER BY i"
        )
    before = db.counts()
    result = cli(["load", "late-table", "--from-table", "public.late_rows", "--jobs", "2"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "error: table public.late_rows: document 'r06500' has no \"text\"\n"
    assert db.counts() == before


def test_the_document_named_is_the_one_postgresql_cannot_index(
    cli: Any, db: Database, tmp_path: Path
) -> None:
    """PostgreSQL indexes a word of 2,047 bytes and drops one of 2,048: a document
    with the first is fine, the error names the one with the second."""
    docs = [
        {"id": "a-fine", "text": "x" * 2_047},
        {"id": "b-long", "text": "ok " + "é" * 1_024},  # 2,048 bytes
    ]
    before = db.counts()
    result = cli(["load", "boundary", str(write_jsonl(tmp_path / "b.jsonl", docs)), "--jobs", "2"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("error: document 'b-long' has a word of "), result.stderr
    assert db.counts() == before
    fine = cli(
        ["load", "boundary", str(write_jsonl(tmp_path / "a.jsonl", docs[:1])), "--jobs", "2"]
    )
    assert (fine.code, fine.stdout) == (0, "loaded snapshot 'boundary' (1 document)\n")
    assert cli(["snapshots", "drop", "boundary"]).code == 0
