"""Size limits (README "Limits and guarantees"): each documented limit, at the limit
and one past it.

* documents per ``hints`` request (``MAX_DOCUMENTS_PER_REQUEST``), bytes per request
  (``MAX_REQUEST_BYTES``), bytes per document id or snapshot id (``MAX_ID_BYTES``),
  bytes per document (``MAX_DOCUMENT_BYTES``), bytes per query (``MAX_QUERY_BYTES``):
  at the limit the input is used; past it, exit 2 with one ``error:`` line naming the
  limit (and the document, and for files the line), and nothing is stored. Limits
  count UTF-8 bytes, not characters.
* No statement binds per-document parameters: snapshots and requests of more than
  65,535 documents (PostgreSQL's limit on bind parameters) load and rank.

PostgreSQL's own tsvector limits (1 MB, 2,047-byte words) are in ``test_limits.py``.
"""

from __future__ import annotations

import io
import json
import random
import string
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from riido_pg import (
    Document,
    InvalidInput,
    RiidoError,
    documents,
    drop_snapshot,
    get_snapshot,
    load_snapshot,
    rank_snapshot,
)
from riido_pg.documents import (
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENTS_PER_REQUEST,
    MAX_ID_BYTES,
    MAX_QUERY_BYTES,
    MAX_REQUEST_BYTES,
    parse_request,
)
from riido_pg.ranking import policies

Conn = psycopg.Connection[Any]
ASTRAL = "\U0001d518"  # 4 bytes of UTF-8

POLICIES = tuple(p.name for p in policies())


def _request(n_docs: int, *, query: str = "w1", snapshot_id: str = "s") -> bytes:
    """A ``hints`` request of ``n_docs`` tiny documents ``d000000``.. with text ``wI common``."""
    head = json.dumps({"snapshot_id": snapshot_id, "query": query}, ensure_ascii=False)
    docs = b",".join(b'{"id":"d%06d","text":"w%d common"}' % (i, i) for i in range(n_docs))
    return head[:-1].encode() + b', "documents": [' + docs + b"]}"


def _one_error_line(result: Any, message: str) -> None:
    assert (result.code, result.stdout, result.stderr) == (2, "", f"error: {message}\n")


@pytest.fixture(scope="module", autouse=True)
def small(db: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "small", [Document("a", "read config"), Document("b", "parse")])


# -- documents per request ------------------------------------------------------------


def test_documents_per_request_over_the_limit_exit_2(cli: Any, db: Any) -> None:
    before = db.counts()
    n = MAX_DOCUMENTS_PER_REQUEST + 1
    result = cli(["hints"], input=_request(n))
    _one_error_line(result, f"stdin: {n} documents; the limit is {MAX_DOCUMENTS_PER_REQUEST}")
    assert db.counts() == before


@pytest.mark.slow
def test_documents_per_request_at_the_limit_rank(cli: Any, db: Any) -> None:
    """100,000 documents > 65,535: the hints path binds no per-document parameters."""
    n = MAX_DOCUMENTS_PER_REQUEST
    before = db.counts()
    result = cli(["hints", "--identifier-hints"], input=_request(n, query="w12345 common"))
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["policy"] == "identifier_bm25_baseline_first"
    candidates = body["candidates"]
    assert len(candidates) == n and len({c["id"] for c in candidates}) == n
    assert [c["rank"] for c in candidates[:3]] == [1, 2, 3] and candidates[-1]["rank"] == n
    assert candidates[0]["id"] == "d012345"
    assert db.counts() == before


# -- bytes per request ----------------------------------------------------------------


def test_request_byte_limit_is_documented_and_counts_bytes_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert MAX_REQUEST_BYTES == 256 * 1024 * 1024
    good = _request(2, query="é" * 50)  # 2 bytes a character
    limit = len(good)
    assert len(good.decode()) < limit
    monkeypatch.setattr(documents, "MAX_REQUEST_BYTES", limit)
    assert [d.id for d in parse_request(good).documents] == ["d000000", "d000001"]
    message = f"stdin: request is larger than {limit} bytes"
    for bad in (good + b" ", b"{" * (limit + 1), b"\xff" * (limit + 1)):
        # checked first: oversized malformed JSON or invalid UTF-8 gets the size message
        with pytest.raises(InvalidInput) as err:
            parse_request(bad)
        assert str(err.value) == message


def test_cli_hints_applies_the_request_byte_limit(
    monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    """In this process (the ``cli`` fixture), so the limit can be lowered for it."""
    data = _request(3, query="w2")
    monkeypatch.setattr(documents, "MAX_REQUEST_BYTES", len(data))
    result = cli(["hints"], input=data)
    assert (result.code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["candidates"][0]["id"] == "d000002"
    monkeypatch.setattr(documents, "MAX_REQUEST_BYTES", len(data) - 1)
    message = f"stdin: request is larger than {len(data) - 1} bytes"
    _one_error_line(cli(["hints"], input=data), message)


class _CountingStdin(io.RawIOBase):
    """``size`` bytes of stdin that remember how many were read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.size - self.consumed)
        buffer[:n] = b"{" * n
        self.consumed += n
        return n


def test_cli_hints_stops_reading_stdin_past_the_byte_limit(
    monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    limit = 1_000
    raw = _CountingStdin(8 * 1024 * 1024)
    monkeypatch.setattr(documents, "MAX_REQUEST_BYTES", limit)
    _one_error_line(cli(["hints"], input=raw), f"stdin: request is larger than {limit} bytes")
    assert raw.consumed <= limit + 1 + 64 * 1024  # a buffer's worth of slack


# -- document ids ---------------------------------------------------------------------


def _hints(cli: Any, docs: list[dict[str, str]], query: str = "read") -> Any:
    return cli(["hints"], input=json.dumps({"snapshot_id": "s", "query": query, "documents": docs}))


@pytest.mark.parametrize("doc_id", ["i" * MAX_ID_BYTES, ASTRAL * (MAX_ID_BYTES // 4)])
def test_document_id_at_the_limit_is_used(cli: Any, doc_id: str) -> None:
    assert len(doc_id.encode()) == MAX_ID_BYTES
    result = _hints(cli, [{"id": "other", "text": "parse"}, {"id": doc_id, "text": "read"}])
    assert result.code == 0, result.stderr
    assert [c["id"] for c in json.loads(result.stdout)["candidates"]] == [doc_id, "other"]


@pytest.mark.parametrize(
    "doc_id", ["i" * (MAX_ID_BYTES + 1), "é" * (MAX_ID_BYTES // 2 + 1)], ids=["ascii", "2-byte"]
)
def test_document_id_over_the_limit_exit_2(cli: Any, db: Any, tmp_path: Path, doc_id: str) -> None:
    assert len(doc_id) <= MAX_ID_BYTES + 1 and len(doc_id.encode()) > MAX_ID_BYTES
    before = db.counts()
    result = _hints(cli, [{"id": "ok", "text": "read"}, {"id": doc_id, "text": "read"}])
    _one_error_line(result, f"stdin: documents[1]: document id is longer than {MAX_ID_BYTES} bytes")
    src = tmp_path / "docs.jsonl"
    lines = [{"id": "ok", "text": "read"}, {"id": "ok2", "text": "x"}, {"id": doc_id, "text": "y"}]
    src.write_text("".join(json.dumps(d) + "\n" for d in lines))
    result = cli(["load", "long-id", str(src)])
    _one_error_line(result, f"{src}: line 3: document id is longer than {MAX_ID_BYTES} bytes")
    assert db.counts() == before


# -- document bytes -------------------------------------------------------------------


def test_document_of_exactly_max_bytes_is_used(cli: Any) -> None:
    text = "ab " * (MAX_DOCUMENT_BYTES // 3) + "a" * (MAX_DOCUMENT_BYTES % 3)
    assert len(text.encode()) == MAX_DOCUMENT_BYTES
    result = _hints(cli, [{"id": "big", "text": text}, {"id": "x", "text": "cd"}], query="ab")
    assert result.code == 0, result.stderr
    assert [c["id"] for c in json.loads(result.stdout)["candidates"]] == ["big", "x"]


def test_document_over_max_bytes_in_a_file_names_line_and_id(
    cli: Any, db: Any, tmp_path: Path
) -> None:
    size = MAX_DOCUMENT_BYTES + 1
    text = "é" * (size // 2) + "a" * (size % 2)  # fewer characters than the limit
    assert len(text) < MAX_DOCUMENT_BYTES < len(text.encode()) == size
    src = tmp_path / "docs.jsonl"
    src.write_text(
        json.dumps({"id": "fine", "text": "ok"}) + "\n" + json.dumps({"id": "huge", "text": text})
    )
    before = db.counts()
    result = cli(["load", "huge", str(src)])
    _one_error_line(
        result, f"{src}: line 2: document 'huge' is {size} bytes; the limit is {MAX_DOCUMENT_BYTES}"
    )
    assert db.counts() == before


def _random_id(n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice(string.ascii_letters) for _ in range(n))  # incompressible


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (Document("i" * (MAX_ID_BYTES + 1), "read"), f"longer than {MAX_ID_BYTES} bytes"),
        (Document(_random_id(3000), "read"), f"longer than {MAX_ID_BYTES} bytes"),
        (Document("big", "ab " * (MAX_DOCUMENT_BYTES // 3 + 1)), f"limit is {MAX_DOCUMENT_BYTES}"),
        (Document("", "read"), "non-empty"),
        (Document("nul", "a\x00b"), "'nul' text contains a NUL character"),
        (Document("sur", "a\ud800b"), "'sur' text contains a lone surrogate"),
    ],
    ids=["id-1025", "id-3000", "text-over", "empty-id", "nul", "surrogate"],
)
def test_library_load_applies_the_document_limits(
    conn: Conn, db: Any, doc: Document, message: str
) -> None:
    before = db.counts()
    snapshot_id = f"lib-limits-{uuid.uuid4().hex}"
    try:
        with pytest.raises(InvalidInput, match=message):
            load_snapshot(conn, snapshot_id, [Document("aaa", "x"), doc, Document("zz", "y")])
        assert db.counts() == before
    finally:
        if conn.execute(
            "SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,)
        ).fetchone():
            drop_snapshot(conn, snapshot_id)


# -- snapshot ids ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_doc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("src") / "one.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "read config"}) + "\n")
    return path


@pytest.mark.parametrize(
    ("snapshot_id", "message"),
    [
        ("", "snapshot id must be a non-empty string"),
        ("s" * (MAX_ID_BYTES + 1), f"snapshot id is longer than {MAX_ID_BYTES} bytes"),
        ("é" * (MAX_ID_BYTES // 2 + 1), f"snapshot id is longer than {MAX_ID_BYTES} bytes"),
        # invalid UTF-8 on the command line (a NUL cannot be passed in argv at all)
        ("bad\udcff", "snapshot id is not valid UTF-8"),
    ],
    ids=["empty", "long", "long-2-byte", "invalid-utf8"],
)
def test_cli_load_rejects_bad_snapshot_ids(
    cli: Any, db: Any, one_doc: Path, snapshot_id: str, message: str
) -> None:
    before = db.counts()
    _one_error_line(cli(["load", snapshot_id, str(one_doc)]), message)
    assert db.counts() == before


def test_snapshot_id_with_nul_is_rejected(cli: Any, conn: Conn, db: Any) -> None:
    before = db.counts()
    with pytest.raises(InvalidInput, match=r"^snapshot id contains a NUL character$"):
        load_snapshot(conn, "a\x00b", [Document("a", "read")])
    request = {"snapshot_id": "a\x00b", "query": "q", "documents": [{"id": "a", "text": "b"}]}
    result = cli(["hints"], input=json.dumps(request))
    _one_error_line(result, "snapshot id contains a NUL character")
    assert db.counts() == before


def test_snapshot_id_at_the_limit_loads_and_ranks(cli: Any, one_doc: Path) -> None:
    snapshot_id = ASTRAL * (MAX_ID_BYTES // 4)
    result = cli(["load", snapshot_id, str(one_doc)])
    assert result.code == 0, result.stderr
    result = cli(["query", snapshot_id, "read"])
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["snapshot_id"] == snapshot_id


def test_query_of_an_overlong_snapshot_id_is_rejected(cli: Any) -> None:
    snapshot_id = "s" * (4 * MAX_ID_BYTES)
    result = cli(["query", snapshot_id, "read"])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == f"error: snapshot id is longer than {MAX_ID_BYTES} bytes\n"


@pytest.mark.parametrize(
    "case", ["cli-query", "cli-drop", "lib-rank-nul", "lib-rank-surrogate", "lib-drop-nul"]
)
def test_query_and_drop_reject_bad_snapshot_ids(cli: Any, conn: Conn, case: str) -> None:
    if case == "cli-query":
        result = cli(["query", "bad\udcff", "read"])
    elif case == "cli-drop":
        result = cli(["snapshots", "drop", "bad\udcff"])
    else:
        snapshot_id = "bad\ud800" if case.endswith("surrogate") else "bad\x00"
        call = (
            drop_snapshot
            if case.startswith("lib-drop")
            else (lambda c, s: rank_snapshot(c, s, "read"))
        )
        with pytest.raises(RiidoError) as err:
            call(conn, snapshot_id)
        assert err.value.__class__.__name__ in ("InvalidInput", "SnapshotNotFound")
        return
    assert result.code == 2 and result.stdout == "", result
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


# -- query bytes ----------------------------------------------------------------------

AT_LIMIT = ["r" * MAX_QUERY_BYTES, "é" * (MAX_QUERY_BYTES // 2), ASTRAL * (MAX_QUERY_BYTES // 4)]


@pytest.mark.parametrize("query", AT_LIMIT, ids=["1-byte", "2-byte", "4-byte"])
def test_query_of_exactly_max_bytes_ranks_and_one_more_byte_fails(
    cli: Any, conn: Conn, query: str
) -> None:
    assert len(query.encode()) == MAX_QUERY_BYTES
    over = query + "a"
    message = f"query is {MAX_QUERY_BYTES + 1} bytes; the limit is {MAX_QUERY_BYTES}"
    for policy in POLICIES[:2]:
        assert len(rank_snapshot(conn, "small", query, policy=policy).candidates) == 2
        with pytest.raises(InvalidInput) as err:
            rank_snapshot(conn, "small", over, policy=policy)
        assert str(err.value) == message
    result = cli(["query", "small", query])
    assert result.code == 0, result.stderr
    assert len(json.loads(result.stdout)["candidates"]) == 2
    _one_error_line(cli(["query", "small", over]), message)


# -- more documents than PostgreSQL has bind parameters -------------------------------

MANY = 70_000
assert MANY > 65_535


def _many() -> list[Document]:
    return [Document(f"d{i:05d}", f"w{i} common t{i % 97}") for i in range(MANY)]


@pytest.mark.slow
def test_library_load_of_70000_documents_ranks(conn: Conn) -> None:
    docs = _many()
    result = load_snapshot(conn, "many-lib", docs)
    assert (result.documents, result.action) == (MANY, "created")
    assert get_snapshot(conn, "many-lib").documents == MANY
    assert load_snapshot(conn, "many-lib", list(reversed(docs))).action == "unchanged"
    full = rank_snapshot(conn, "many-lib", "w4321 common")
    assert len(full.candidates) == MANY and full.candidates[0].id == "d04321"
    assert [c.rank for c in full.candidates] == list(range(1, MANY + 1))
    for policy in POLICIES[1:4]:
        top = rank_snapshot(conn, "many-lib", "w4321 common", policy=policy, limit=3)
        assert [c.rank for c in top.candidates] == [1, 2, 3]
        assert top.candidates[0].id == "d04321"
    # every id as an external hint: one array parameter, not 70,000
    hints = [d.id for d in reversed(docs)]
    hinted = rank_snapshot(
        conn, "many-lib", "w4321 common", policy="external_hints_baseline_first", hints=hints
    )
    assert [c.id for c in hinted.candidates[:3]] == ["d04321", "d69999", "d00000"]
    assert len(hinted.candidates) == MANY


@pytest.mark.slow
def test_cli_load_of_70000_documents_from_jsonl_ranks(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in _many()))
    result = cli(["load", "many-cli", str(src), "--fresh"])  # not on many-lib: all written
    assert (result.code, result.stdout) == (0, f"loaded snapshot 'many-cli' ({MANY} documents)\n")
    result = cli(["query", "many-cli", "w69999", "--identifier-hints", "--all"])
    assert result.code == 0, result.stderr
    candidates = json.loads(result.stdout)["candidates"]
    assert len(candidates) == MANY and candidates[0]["id"] == "d69999"
    result = cli(["query", "many-cli", "t5", "--limit", "2"])
    assert [c["id"] for c in json.loads(result.stdout)["candidates"]] == ["d00005", "d00102"]
