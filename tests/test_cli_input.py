"""Bad stdin for `riido-pg hints`: one `error:` line, exit 2, nothing written."""

from __future__ import annotations

import json
from typing import Any

import pytest

GOOD_DOCS = [{"id": "a", "text": "read"}, {"id": "b", "text": "config"}]


def _req(**kw: Any) -> bytes:
    body = {"snapshot_id": "s", "query": "read", "documents": GOOD_DOCS}
    body.update(kw)
    return json.dumps(body).encode()


CASES = [
    (b'{"snapshot_id": "s", "query": ', "stdin: line 1: malformed JSON"),
    (b"\xff\xfe{}", "stdin: line 1: invalid UTF-8"),
    (b"[]", "stdin: expected a JSON object with snapshot_id, query, documents"),
    (_req(documents=[]), "stdin: no documents"),
    (_req(query=5), "query must be a string"),
    (_req(documents=[{"text": "x"}]), 'stdin: documents[0]: document has no "id"'),
    (_req(documents=[{"id": 7, "text": "x"}]), "document id 7 is not a non-empty string"),
    (_req(documents=[{"id": "a"}]), "document 'a' has no \"text\""),
    (_req(documents=[{"id": "a", "text": ["x"]}]), "document 'a' text is not a string"),
    (_req(documents=[*GOOD_DOCS, {"id": "a", "text": "x"}]), "duplicate document id 'a'"),
    (
        _req(documents=[{"id": "a", "text": "x\u0000y"}]),
        "document 'a' text contains a NUL character",
    ),
    (
        b'{"snapshot_id": "s", "query": "q", "documents": [{"id": "a", "text": "\\ud800"}]}',
        "document 'a' text contains a lone surrogate",
    ),
    (
        b'{"snapshot_id": "s", "query": "\\udfff", "documents": []}',
        "query contains a lone surrogate",
    ),
    (_req(documents="nope"), '"documents" must be a list'),
    (json.dumps({"query": "q", "documents": GOOD_DOCS}).encode(), 'missing "snapshot_id"'),
    (b"", "stdin: the input is empty; expected a JSON object with snapshot_id, query, documents"),
    (b"  \n", "stdin: the input is empty; expected a JSON object"),
]


@pytest.mark.parametrize(("data", "message"), CASES)
def test_bad_request(cli: Any, db: Any, data: bytes, message: str) -> None:
    result = cli(["hints", "--identifier-hints"], input=data)
    assert result.code == 2, result
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert db.count("snapshots") == 0
