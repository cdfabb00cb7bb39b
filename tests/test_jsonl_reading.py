"""A ``.jsonl`` line read by orjson (``riido_pg.sources.files._quick_document``) gives
what the standard library's reading gives, or is left to it: never another document,
never a document where the standard reading says ``error:``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riido_pg.documents import Document
from riido_pg.errors import InvalidInput
from riido_pg.jsontext import MAX_DEPTH
from riido_pg.sources import files


def _standard(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> Document | str | None:
    """The line read as before orjson: its Document, its error, or None (blank)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.jsonl"
        path.write_bytes(raw)
        with monkeypatch.context() as m:
            m.setattr(files, "_quick_document", lambda raw: None)
            try:
                docs = list(files._lines(path))
            except InvalidInput as exc:
                return str(exc).replace(str(path), "FILE")
    assert len(docs) <= 1
    return docs[0] if docs else None


def _agrees(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether orjson took the line; assert it read what the standard reading does."""
    quick = files._quick_document(raw)
    if quick is None:
        return False
    assert _standard(raw, monkeypatch) == quick, raw
    return True


LINES = [
    b'{"id": "a", "text": "read config"}\n',
    b'{"id":"a","text":"b"}\r\n',
    b' \t{"id":"a","text":"b"}\t \n',
    b'{"id":"a","text":"b","extra":[1,2,{"x":null}]}',
    b'{"id":"a","text":"\\u00e9\\ud83d\\ude00 caf\xc3\xa9"}',
    b'{"_id":"a","title":"T","text":"body"}',
    b'{"_id":"a","title":"","text":"body"}',
    b'{"_id":"a","title":3,"text":"body"}',
    b'{"_id":"a","id":"b","text":"body"}',
    b'{"id":"a","text":"b","n":123456789012345678901234567890}',
    b'{"id":123456789012345678901234567890,"text":"b"}',
    b'{"id":1.5,"text":"b"}',
    b'{"id":"a","text":"b","id":"c"}',
    b'{"id":"","text":"b"}',
    b'{"id":"a"}',
    b'{"text":"b"}',
    b'{"id":"a","text":null}',
    b'{"id":"a","text":"\\u0000"}',
    b'{"id":"a","text":"\\ud800"}',
    b'{"id":"a\\udc80","text":"b"}',
    b'{"id":"a","text":NaN}',
    b'{"id":"a","text":"b","x":Infinity}',
    b'{"id":"a","text":"b","x":1e400}',
    b'\xef\xbb\xbf{"id":"a","text":"b"}',
    b'{"id":"a","text":"b\xc3"}',
    b'{"id":"a","text":"\xed\xa0\x80"}',
    b'{"id":"a","text":"b"}{}',
    b'{"id":"a","text":"b"}\x00',
    b'{"id":"a","text":"b"}\x0c',
    b'{"id":"a","text":"tab\there"}',
    b'["id","text"]',
    b'"a string"',
    b"\n",
    b"   \r\n",
    b"\x0c\n",
    b"",
    b'{"id":"a","text":"b","deep":' + b"[" * (MAX_DEPTH - 3) + b"]" * (MAX_DEPTH - 3) + b"}",
    b'{"id":"a","text":"b","deep":' + b"[" * (MAX_DEPTH + 5) + b"]" * (MAX_DEPTH + 5) + b"}",
    b'{"id":"a","text":"' + b"[" * (MAX_DEPTH + 5) + b'"}',
    b'{"id":"' + b"i" * 2000 + b'","text":"b"}',
]


def test_tricky_lines_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blank lines, BOMs, NaN, lone surrogates, huge integers, duplicate keys, BEIR
    titles, depth, invalid UTF-8, extra data: orjson's document is the standard one
    wherever orjson gives one, and the ordinary lines do go through orjson."""
    taken = [raw for raw in LINES if _agrees(raw, monkeypatch)]
    assert LINES[0] in taken and LINES[5] in taken and LINES[9] in taken
    assert len(taken) >= 10


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    doc_id=st.one_of(st.text(max_size=6), JSON_VALUES),
    text=st.one_of(st.text(max_size=12), JSON_VALUES),
    extra=st.dictionaries(st.sampled_from(["_id", "title", "x", "id"]), JSON_VALUES),
    cut=st.integers(min_value=0, max_value=200),
    noise=st.binary(max_size=3),
)
def test_any_line_reads_the_same(
    doc_id: object, text: object, extra: dict[str, object], cut: int, noise: bytes
) -> None:
    """Documents of any id and text (strings, numbers past 64 bits, nesting, nulls),
    whole or cut short or with stray bytes: the same reading both ways."""
    line = json.dumps({"id": doc_id, "text": text, **extra}).encode()
    with pytest.MonkeyPatch.context() as monkeypatch:
        for raw in (line, line[:cut], line + noise, noise + line):
            _agrees(raw, monkeypatch)
