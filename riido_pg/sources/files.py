"""Documents from files: a ``.json`` request, ``.jsonl`` lines, a BEIR corpus, and
hint lists (README "Command line")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from riido_pg.documents import (
    Document,
    DocumentSet,
    DocumentStream,
    decode_utf8,
    describe,
    document_from_line,
    document_from_object,
    parse_json,
    validate_documents,
)
from riido_pg.errors import InvalidInput
from riido_pg.jsontext import read_json

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
            where = f"{path}: line {lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"{where}: invalid UTF-8 (byte {exc.start})") from exc
            if not line.strip():
                continue
            yield document_from_line(read_json(line, where, one_line=True), where)


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
