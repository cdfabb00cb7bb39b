"""Documents from files: a ``.json`` request, ``.jsonl`` lines, a BEIR corpus, and
hint lists (README "Command line")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from riido_pg.documents import (
    Document,
    DocumentSet,
    DocumentStream,
    decode_utf8,
    describe,
    document_from_line,
    document_from_object,
    document_problem,
    parse_json,
    validate_documents,
)
from riido_pg.errors import InvalidInput
from riido_pg.jsontext import MAX_DEPTH, read_json

__all__ = ["beir_documents", "json_documents", "jsonl_documents", "read_hints"]


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read {what}: {exc.strerror}") from exc


def _lines(path: Path) -> Iterator[Document]:
    """Each non-blank line of a ``.jsonl`` file as a checked Document
    (:func:`~riido_pg.documents.document_from_line`); errors name the line."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read the file: {exc.strerror}") from exc
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            doc = _quick_document(raw)
            if doc is not None:
                yield doc
                continue
            where = f"{path}: line {lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"{where}: invalid UTF-8 (byte {exc.start})") from exc
            if not line.strip():
                continue
            yield document_from_line(read_json(line, where, one_line=True), where)


def _quick_document(raw: bytes) -> Document | None:
    """The Document of a ``.jsonl`` line that is one, as :func:`_lines`'s reading
    would give it, parsed by orjson (a quarter of the standard library's time, the
    largest part of reading a next commit's 100,000 lines); None for anything else --
    malformed or blank, invalid UTF-8, possibly nested past :data:`MAX_DEPTH`, not a
    usable document -- which is then read the standard library's way, errors and all.

    Where orjson accepts a line, the standard library reads the same value from it
    (orjson is the stricter: no NaN, no lone surrogates, no byte order mark), but for
    an integer past 64 bits, which orjson makes a float: as an id, a text or a title
    it is no string either way (the line is then no usable document and is read the
    standard way, whose error names the integer), and any other key is not read
    (``tests/test_jsonl_reading.py`` compares the two readings)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        return None
    if "_id" in obj and "id" not in obj:  # a BEIR line: document_from_line's title
        doc_id, text, title = obj["_id"], obj.get("text"), obj.get("title")
        if isinstance(title, str) and title and isinstance(text, str):
            text = f"{title}\n{text}"
    else:
        doc_id, text = obj.get("id"), obj.get("text")
    if document_problem(doc_id, text) is not None:
        return None
    return Document(doc_id, text)  # type: ignore[arg-type]  # checked just now


def jsonl_documents(path: Path) -> DocumentStream:
    """A ``.jsonl`` file of ``{"id","text"}`` (or BEIR ``{"_id","title","text"}``)
    lines, read line by line as the stream is consumed."""
    return DocumentStream(lambda: _lines(path), where=str(path))


def beir_documents(directory: Path) -> DocumentStream:
    """A BEIR directory's ``corpus.jsonl`` (a title is prepended to the text)."""
    corpus = directory / "corpus.jsonl"
    if not corpus.is_file():
        raise InvalidInput(f"{directory}: not a BEIR directory (no corpus.jsonl)")
    return jsonl_documents(corpus)


def json_documents(path: Path, *, snapshot_id: str | None = None) -> DocumentStream:
    """The documents of a ``.json`` request file (one object, parsed whole, now).

    A file that names a ``snapshot_id`` other than ``snapshot_id`` (the id it is being
    loaded under) is refused: one of the two is a mistake."""
    where = str(path)
    expected = 'a JSON object with a "documents" list'
    obj = parse_json(decode_utf8(_read(path, "the file"), where), where, expected)
    if not isinstance(obj, dict) or not isinstance(obj.get("documents"), list):
        raise InvalidInput(f"{where}: expected {expected}")
    named = obj.get("snapshot_id")
    if snapshot_id is not None and named is not None and named != snapshot_id:
        raise InvalidInput(
            f"{where}: the file is for snapshot {describe(named)}, not {describe(snapshot_id)}; "
            "load it under the id it names, or remove its snapshot_id"
        )
    docs: DocumentSet = validate_documents(
        (
            document_from_object(d, f"{where}: documents[{i}]")
            for i, d in enumerate(obj["documents"])
        ),
        where=where,
        checked=True,
    )
    return DocumentStream(lambda: iter(docs), where=where)


def read_hints(path: Path) -> list[str]:
    """A hints file: a JSON array of document ids, in hint order."""
    where = str(path)
    expected = "a JSON array of document ids"
    obj = parse_json(decode_utf8(_read(path, "the hints file"), where), where, expected)
    if not isinstance(obj, list):
        raise InvalidInput(f"{where}: a hints file must be {expected}")
    for i, item in enumerate(obj):
        if not isinstance(item, str):
            raise InvalidInput(f"{where}: item {i} is not a document id string")
    return list(obj)
