"""Caller input: the document types and their validation, queries, requests.

Everything a caller hands over is checked here, before any database work, so bad
input costs nothing and leaves nothing behind. Messages are short, lowercase and
name the document (and, for files, the line). Reading files of documents is
:mod:`riido_pg.sources`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol, overload

from riido_pg.errors import InvalidInput
from riido_pg.jsontext import read_json

__all__ = [
    "MAX_DOCUMENTS_PER_REQUEST",
    "MAX_DOCUMENT_BYTES",
    "MAX_ID_BYTES",
    "MAX_LIMIT",
    "MAX_QUERY_BYTES",
    "MAX_REQUEST_BYTES",
    "Document",
    "DocumentSet",
    "DocumentStream",
    "HintsRequest",
    "PastCommitRow",
    "PastWindow",
    "RankRequest",
    "check_document",
    "check_item",
    "check_item_utf8",
    "check_query",
    "check_snapshot_id",
    "decode_utf8",
    "describe",
    "document_from_line",
    "document_from_object",
    "document_problem",
    "parse_json",
    "parse_request",
    "read_request",
    "text_problem",
    "validate_documents",
]

#: Largest document text, in UTF-8 bytes.
MAX_DOCUMENT_BYTES = 1_000_000
#: Largest document id or snapshot id, in UTF-8 bytes.
MAX_ID_BYTES = 1_024
#: Largest query, in UTF-8 bytes.
MAX_QUERY_BYTES = 65_536
#: Most documents one ``hints`` request may carry.
MAX_DOCUMENTS_PER_REQUEST = 100_000
#: Largest ``hints`` request, in bytes of JSON.
MAX_REQUEST_BYTES = 256 * 1024 * 1024
#: Largest ``limit`` of a ranking (PostgreSQL's bigint, which LIMIT takes).
MAX_LIMIT = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Document:
    """One document: an id unique within its snapshot and its text."""

    id: str
    text: str


class DocumentSet(Sequence[Document]):
    """Documents checked once, at the boundary: every one a valid :class:`Document`,
    ids unique, at least one; held in id byte order (the order snapshots number them).

    The constructor is the validation, so a ``DocumentSet`` that exists is valid and
    the layers below (digest, loading) take it as it is. ``checked=True`` says every
    item already came through :func:`check_document` (the file readers), which skips
    only the per-document checks, never the duplicate and empty checks.
    """

    __slots__ = ("_docs",)

    def __init__(
        self, docs: Iterable[object], *, where: str = "input", checked: bool = False
    ) -> None:
        out: list[Document] = []
        seen: set[str] = set()
        for i, item in enumerate(docs):
            doc = item if checked else check_item(item, i, where)
            assert isinstance(doc, Document)
            if doc.id in seen:
                raise InvalidInput(f"{where}: duplicate document id {describe(doc.id)}")
            seen.add(doc.id)
            out.append(doc)
        if not out:
            raise InvalidInput(f"{where}: no documents")
        out.sort(key=lambda d: d.id)  # code point order == UTF-8 byte order (no surrogates)
        self._docs: tuple[Document, ...] = tuple(out)

    @overload
    def __getitem__(self, index: int) -> Document: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Document]: ...
    def __getitem__(self, index: int | slice) -> Document | Sequence[Document]:
        return self._docs[index]

    def __len__(self) -> int:
        return len(self._docs)

    def __iter__(self) -> Iterator[Document]:
        return iter(self._docs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DocumentSet):
            return self._docs == other._docs
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._docs)

    def __repr__(self) -> str:
        return f"DocumentSet({len(self._docs)} documents)"


class PastCommitRow(Protocol):
    """What a past commit says and changed (:class:`riido_pg.extract.similar.PastCommit`)."""

    @property
    def commit(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def keys(self) -> frozenset[str]: ...


class PastWindow(Protocol):
    """A git revision's window of past commits, as a load stores it
    (:class:`riido_pg.extract.similar.RevisionWindow`): its commit ids, what some of
    them say and changed, and where the loaded directory sits in the repository."""

    @property
    def prefix(self) -> str: ...
    def shas(self) -> list[str]: ...
    def read(self, shas: Sequence[str]) -> Sequence[PastCommitRow]: ...


class DocumentStream(Iterable[Document]):
    """Documents read one at a time (a load streams them: no process holds them all).

    ``where`` names the input in messages; ``checked`` says every item already came
    through :func:`check_document`. Uniqueness of ids and "at least one document" are
    checked by the load that consumes the stream, in the database. Iterating a second
    time reads the input again. ``skip_unindexable``, if set, is told
    ``(doc_id, reason)`` of each document PostgreSQL cannot index, which the load then
    leaves out instead of failing (a source tree's functions: the caller has what it
    has). ``recent``, if set, gives once the stream is read the ids of its recently
    changed documents (a git revision's: :mod:`riido_pg.extract.recent`), which the
    load stores for the recency prior. ``history``, if set, is the git revision's
    window of past commits (:class:`~riido_pg.extract.similar.RevisionWindow`), which
    the load stores for the history-similarity prior.
    """

    __slots__ = ("_make", "checked", "history", "recent", "skip_unindexable", "where")

    def __init__(
        self,
        make: Callable[[], Iterator[Document]],
        *,
        where: str,
        checked: bool = True,
        skip_unindexable: Callable[[str, str], None] | None = None,
        recent: Callable[[], frozenset[str]] | None = None,
        history: PastWindow | None = None,
    ) -> None:
        self._make = make
        self.where = where
        self.checked = checked
        self.skip_unindexable = skip_unindexable
        self.recent = recent
        self.history = history

    def __iter__(self) -> Iterator[Document]:
        return self._make()

    def __repr__(self) -> str:
        return f"DocumentStream({self.where})"


@dataclass(frozen=True, slots=True)
class RankRequest:
    """Documents to rank for a query, kept nowhere (the stdin object of
    ``riido-pg hints``); its documents are validated."""

    snapshot_id: str
    query: str
    documents: DocumentSet


#: The former name of :class:`RankRequest` (it holds no hints), kept for callers.
HintsRequest = RankRequest


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as PostgreSQL text, or None."""
    return _utf8(value)[1]


def _utf8(value: str) -> tuple[bytes, str | None]:
    """``value`` in UTF-8 and why it cannot be stored as PostgreSQL text (or None):
    one encoding serves the check and the size."""
    if "\x00" in value:
        return b"", "contains a NUL character"
    try:
        return value.encode("utf-8"), None
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        if "\udc80" <= bad <= "\udcff":
            # how Python decodes invalid bytes in command-line arguments (surrogateescape)
            return b"", "is not valid UTF-8"
        return b"", "contains a lone surrogate (invalid unicode)"


def describe(doc_id: object) -> str:
    """A short repr for messages."""
    text = repr(doc_id)
    return text if len(text) <= 80 else text[:77] + "..."


#: C0 controls, DEL and C1 controls: never in a snapshot id (they would reach
#: terminals raw, and one names the hidden row of a parallel replace).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_snapshot_id(snapshot_id: object) -> str:
    if not isinstance(snapshot_id, str) or not snapshot_id:
        raise InvalidInput("snapshot id must be a non-empty string")
    problem = text_problem(snapshot_id)
    if problem:
        raise InvalidInput(f"snapshot id {problem}")
    control = _CONTROL.search(snapshot_id)
    if control:
        at = len(snapshot_id[: control.start()].encode("utf-8"))
        raise InvalidInput(
            f"snapshot id contains a control character (\\x{ord(control.group()):02x} at "
            f"byte {at}); use printable characters"
        )
    if len(snapshot_id.encode("utf-8")) > MAX_ID_BYTES:
        raise InvalidInput(f"snapshot id is longer than {MAX_ID_BYTES} bytes")
    return snapshot_id


def check_query(query: object) -> str:
    if not isinstance(query, str):
        raise InvalidInput("query must be a string")
    problem = text_problem(query)
    if problem:
        raise InvalidInput(f"query {problem}")
    size = len(query.encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise InvalidInput(f"query is {size} bytes; the limit is {MAX_QUERY_BYTES}")
    return query


def document_from_object(obj: object, where: str) -> Document:
    """The Document of a parsed ``{"id","text"}`` object, checked; errors name ``where``."""
    if not isinstance(obj, dict):
        raise InvalidInput(f'{where}: a document must be an object with "id" and "text"')
    doc_id = obj.get("id")
    if doc_id is None:
        raise InvalidInput(f'{where}: document has no "id"')
    text = obj.get("text")
    if text is None and isinstance(doc_id, str):
        raise InvalidInput(f'{where}: document {describe(doc_id)} has no "text"')
    return check_document(doc_id, text, where)


def check_document(doc_id: object, text: object, where: str) -> Document:
    """A Document if ``doc_id`` and ``text`` are usable, else InvalidInput naming it."""
    problem = document_problem(doc_id, text)
    if problem:
        raise InvalidInput(f"{where}: {problem}")
    return Document(doc_id, text)  # type: ignore[arg-type]  # checked just now


def document_problem(doc_id: object, text: object) -> str | None:
    """Why ``doc_id`` and ``text`` cannot be a document (for after "WHERE: "), or None."""
    return _checked_utf8(doc_id, text)[0]


def _checked_utf8(doc_id: object, text: object) -> tuple[str | None, bytes]:
    """:func:`document_problem`, and the text's UTF-8 when there is none (the one
    encoding of the text the check needs for its size, kept for its key)."""
    if not isinstance(doc_id, str) or not doc_id:
        return f"document id {describe(doc_id)} is not a non-empty string", b""
    data, problem = _utf8(doc_id)
    if problem:
        return f"document id {describe(doc_id)} {problem}", b""
    if len(data) > MAX_ID_BYTES:
        return f"document id is longer than {MAX_ID_BYTES} bytes", b""
    if text is None:
        return f'document {describe(doc_id)} has no "text"', b""
    if not isinstance(text, str):
        return f"document {describe(doc_id)} text is not a string", b""
    data, problem = _utf8(text)
    if problem:
        return f"document {describe(doc_id)} text {problem}", b""
    if len(data) > MAX_DOCUMENT_BYTES:
        return (
            f"document {describe(doc_id)} is {len(data)} bytes; the limit is {MAX_DOCUMENT_BYTES}",
            b"",
        )
    return None, data


def check_item(item: object, i: int, where: str) -> Document:
    """A caller's ``i``-th item, checked: a usable :class:`Document`, or InvalidInput."""
    return check_item_utf8(item, i, where)[0]


def check_item_utf8(item: object, i: int, where: str) -> tuple[Document, bytes]:
    """:func:`check_item`, and the document's text in UTF-8 (encoded once, for the
    check and for whatever the caller hashes next)."""
    if not isinstance(item, Document):
        raise InvalidInput(f"{where}: item {i} is not a riido_pg.Document")
    problem, data = _checked_utf8(item.id, item.text)
    if problem:
        raise InvalidInput(f"{where}: documents[{i}]: {problem}")
    return item, data  # frozen: nothing can change it after the check


def validate_documents(
    docs: Iterable[object], *, where: str = "input", checked: bool = False
) -> DocumentSet:
    """Check every document (unless ``checked``), that ids are unique and that there is
    at least one; the validated set, in id order."""
    if isinstance(docs, DocumentSet):
        return docs
    return DocumentSet(docs, where=where, checked=checked)


def decode_utf8(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text, or InvalidInput naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInput(f"{where}: line {line}: invalid UTF-8 (byte {exc.start})") from exc


def parse_json(text: str, where: str, expected: str = "JSON") -> Any:
    """One JSON value, or InvalidInput naming the line; an empty (or blank) input is
    said to be empty, and what was ``expected`` instead."""
    if not text.strip():
        raise InvalidInput(f"{where}: the input is empty; expected {expected}")
    return read_json(text, where)


def read_request(stream: BinaryIO, where: str = "stdin") -> RankRequest:
    """Read and parse a ``hints`` request from ``stream``: one byte past
    :data:`MAX_REQUEST_BYTES` at most, never more (:func:`parse_request` reports the
    overflow), so a huge input is refused without being read."""
    return parse_request(stream.read(MAX_REQUEST_BYTES + 1), where)


def parse_request(data: bytes, where: str = "stdin") -> RankRequest:
    """Parse the ``hints`` stdin object ``{"snapshot_id","query","documents"}``."""
    if len(data) > MAX_REQUEST_BYTES:
        raise InvalidInput(f"{where}: request is larger than {MAX_REQUEST_BYTES} bytes")
    expected = "a JSON object with snapshot_id, query, documents"
    obj = parse_json(decode_utf8(data, where), where, expected)
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where}: expected {expected}")
    for key in ("snapshot_id", "query", "documents"):
        if key not in obj:
            raise InvalidInput(f'{where}: missing "{key}"')
    snapshot_id = check_snapshot_id(obj["snapshot_id"])
    query = check_query(obj["query"])
    raw_docs = obj["documents"]
    if not isinstance(raw_docs, list):
        raise InvalidInput(f'{where}: "documents" must be a list')
    if len(raw_docs) > MAX_DOCUMENTS_PER_REQUEST:
        raise InvalidInput(
            f"{where}: {len(raw_docs)} documents; the limit is {MAX_DOCUMENTS_PER_REQUEST}"
        )
    docs = validate_documents(
        (document_from_object(d, f"{where}: documents[{i}]") for i, d in enumerate(raw_docs)),
        where=where,
        checked=True,
    )
    return RankRequest(snapshot_id, query, docs)


def document_from_line(obj: object, where: str) -> Document:
    """The Document of one parsed ``.jsonl`` line: ``{"id","text"}``, or a BEIR corpus
    line ``{"_id","title"?,"text"}`` whose non-empty title is prepended to the text
    (``title + "\\n" + text``)."""
    if isinstance(obj, dict) and "_id" in obj and "id" not in obj:
        title = obj.get("title")
        text = obj.get("text")
        if isinstance(title, str) and title and isinstance(text, str):
            text = f"{title}\n{text}"
        obj = {"id": obj["_id"], "text": text}
    return document_from_object(obj, where)
