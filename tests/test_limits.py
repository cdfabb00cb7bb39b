"""What happens at PostgreSQL's tsvector limits (README "Limits and guarantees").

* a lexeme keeps at most 255 positions (PostgreSQL's MAXNUMPOS - 1): tf, and its
  share of dl, is capped at 255;
* positions past 16,383 are all stored as 16,383, so repeats of a lexeme past that
  point count once;
* a tsvector over 1 MB, or a word of more than 2,047 bytes: the document is rejected,
  by id, and nothing is stored.
"""

from __future__ import annotations

import itertools
import json
import string
from typing import Any

import pytest

from riido_pg import Document, InvalidInput, load_snapshot, rank_snapshot
from riido_pg.documents import MAX_DOCUMENT_BYTES


def _ids_scores(conn: Any, snapshot: str, query: str) -> list[tuple[str, float]]:
    return [(c.id, c.bm25_score) for c in rank_snapshot(conn, snapshot, query).candidates]


def test_tf_is_capped_at_255_positions(conn: Any) -> None:
    load_snapshot(
        conn,
        "cap",
        [Document("a", "foo " * 300), Document("b", "foo " * 255), Document("c", "bar")],
    )
    (a, sa), (b, sb), (c, sc) = _ids_scores(conn, "cap", "foo")
    assert (a, b, c) == ("a", "b", "c")
    assert sa == sb > 0 and sc == 0.0
    row = conn.execute(
        "SELECT t.len_raw FROM riido.snapshot_segments AS p "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "JOIN riido.texts AS t ON t.key = d.text_key "
        "WHERE p.snapshot_id = 'cap' ORDER BY d.doc_ord"
    ).fetchall()
    assert [r[0] for r in row] == [255, 255, 1]


def test_repeats_past_position_16383_count_once(conn: Any) -> None:
    filler = " ".join(f"w{i}" for i in range(16_400))
    load_snapshot(conn, "far", [Document("far", filler + " zz zz zz zz"), Document("x", "y")])
    tf = conn.execute(
        "SELECT cardinality(u.positions) FROM riido.snapshot_segments AS p "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "JOIN riido.texts AS t ON t.key = d.text_key, unnest(t.tsv_raw) AS u "
        "WHERE p.snapshot_id = 'far' AND d.doc_id = 'far' AND u.lexeme = 'zz'"
    ).fetchone()
    assert tf == (1,)


def _words(count: int) -> str:
    return " ".join(
        "".join(t)
        for t in itertools.islice(itertools.product(string.ascii_lowercase, repeat=4), count)
    )


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (Document("big", _words(150_000)), "document 'big' is too large to index"),
        (
            Document("long", "ok " + "x" * 3000),
            "document 'long' has a word of more than 2047 bytes",
        ),
    ],
)
def test_unindexable_document_is_rejected_by_id_and_nothing_is_kept(
    conn: Any, db: Any, bad: Document, message: str
) -> None:
    before = db.counts()
    docs = [Document("fine", "a fine document"), bad, Document("zzz", "another")]
    with pytest.raises(InvalidInput, match=message):
        load_snapshot(conn, f"bad-{bad.id}", docs)
    assert db.counts() == before
    # the same load without the bad document then succeeds
    assert load_snapshot(conn, f"bad-{bad.id}", [docs[0], docs[2]]).action == "created"


def test_word_of_2047_bytes_is_indexed(conn: Any) -> None:
    load_snapshot(conn, "w2047", [Document("d", "x" * 2047), Document("e", "y")])
    assert _ids_scores(conn, "w2047", "x" * 2047)[0][0] == "d"


def test_document_over_byte_limit_is_rejected_before_the_database(cli: Any, db: Any) -> None:
    text = "a" * (MAX_DOCUMENT_BYTES + 1)
    req = {"snapshot_id": "s", "query": "a", "documents": [{"id": "huge", "text": text}]}
    result = cli(["hints"], input=json.dumps(req))
    assert result.code == 2
    assert result.stderr == (
        f"error: stdin: documents[0]: document 'huge' is {MAX_DOCUMENT_BYTES + 1} bytes; "
        f"the limit is {MAX_DOCUMENT_BYTES}\n"
    )


def test_hints_with_unindexable_document_exits_2(cli: Any) -> None:
    req = {
        "snapshot_id": "s",
        "query": "a",
        "documents": [{"id": "ok", "text": "a"}, {"id": "w", "text": "q" * 5000}],
    }
    result = cli(["hints", "--identifier-hints"], input=json.dumps(req))
    assert result.code == 2
    assert result.stderr.startswith("error: document 'w' has a word of more than 2047 bytes")
