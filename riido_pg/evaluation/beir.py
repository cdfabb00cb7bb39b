"""Reading and validating a BEIR directory (README "Evaluation").

A BEIR directory holds

* ``corpus.jsonl``: one document per line, ``{"_id", "text", "title"?, "metadata"?: {"repo"?}}``;
  a document's text is ``title + "\\n" + text`` when it has a non-empty title (the rule
  ``riido-pg load`` applies to BEIR directories: the same reader is used);
* ``queries.jsonl``: one question per line, ``{"_id", "text", "metadata"?: {"repo"?}}``;
* ``qrels/test.tsv``: a header line, then ``query-id<TAB>corpus-id<TAB>score`` lines;
  a pair with score > 0 makes the document a *target* of the question.

Everything is checked before any database work, and every problem is one
:class:`~riido_pg.errors.InvalidCorpus` naming the file and, where there is one, the
line: a missing or unreadable file, a malformed line, a duplicate id, a qrel naming
an unknown question or document, a duplicate qrel, an empty corpus, no questions.
Blank lines are ignored. A question without targets is not an error: it is kept,
skipped by the evaluation and counted (``corpus.skipped_questions`` in its output).

A question's *repo* (for per-repository figures) is its own ``metadata.repo``; when it
has none, the ``metadata.repo`` of its first target (qrels order) that has one; else
the empty string.

The corpus digest (:func:`corpus_sha256`) is the sha256 of the bytes of
``corpus.jsonl``, ``queries.jsonl`` and ``qrels/test.tsv`` concatenated in that order,
i.e. ``cat corpus.jsonl queries.jsonl qrels/test.tsv | sha256sum``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riido_pg.documents import (
    MAX_ID_BYTES,
    MAX_QUERY_BYTES,
    Document,
    DocumentSet,
    describe,
    document_from_line,
    text_problem,
)
from riido_pg.errors import InvalidCorpus, InvalidInput
from riido_pg.jsontext import read_json

__all__ = [
    "CORPUS_FILE",
    "FILES",
    "QRELS_FILE",
    "QUERIES_FILE",
    "BeirBytes",
    "BeirCorpus",
    "Question",
    "corpus_sha256",
    "parse_beir",
    "read_beir",
    "read_files",
]

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
#: The files of a BEIR directory, in digest order.
FILES = (CORPUS_FILE, QUERIES_FILE, QRELS_FILE)
QRELS_HEADER = "query-id\tcorpus-id\tscore"
#: The largest qrel score (a target's score is stored as a PostgreSQL integer).
MAX_SCORE = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Question:
    """A question, its repo ("" when unknown) and its targets ``(doc_id, score)``,
    score > 0, in qrels order. No targets: skipped by the evaluation."""

    id: str
    text: str
    repo: str
    targets: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class BeirCorpus:
    path: Path
    sha256: str
    documents: DocumentSet
    #: Every question of queries.jsonl, in file order, with or without targets.
    questions: list[Question]

    @property
    def skipped(self) -> int:
        """Questions without targets."""
        return sum(1 for q in self.questions if not q.targets)


def _file(directory: Path, name: str) -> Path:
    path = directory / name
    if not path.is_file():
        what = "not a file" if path.exists() else "missing"
        raise InvalidCorpus(f"{path}: {what}; a BEIR directory needs {', '.join(FILES)}")
    return path


@dataclass(frozen=True, slots=True)
class BeirBytes:
    """The bytes of a BEIR directory's three files, read once, and their digest."""

    directory: Path
    sha256: str
    data: dict[str, bytes]

    def path(self, name: str) -> Path:
        return self.directory / name


def read_files(directory: Path) -> BeirBytes:
    """Read corpus.jsonl, queries.jsonl and qrels/test.tsv once, and hash them."""
    if not directory.is_dir():
        raise InvalidCorpus(f"{directory}: not a directory (expected a BEIR directory)")
    h = hashlib.sha256()
    data: dict[str, bytes] = {}
    for name in FILES:
        path = _file(directory, name)
        try:
            data[name] = path.read_bytes()
        except OSError as exc:
            raise InvalidCorpus(f"{path}: cannot read: {exc.strerror}") from exc
        h.update(data[name])
    return BeirBytes(directory, h.hexdigest(), data)


def corpus_sha256(directory: Path) -> str:
    """sha256 of corpus.jsonl, queries.jsonl and qrels/test.tsv, concatenated in that order."""
    return read_files(directory).sha256


def _lines(files: BeirBytes, name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of one file, decoded as UTF-8."""
    path = files.path(name)
    for lineno, raw in enumerate(files.data[name].split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidCorpus(f"{path}: line {lineno}: invalid UTF-8 (byte {exc.start})") from exc
        if line.strip():
            yield lineno, line.rstrip("\r\n")


def _json_values(files: BeirBytes, name: str) -> Iterator[tuple[int, object]]:
    path = files.path(name)
    for lineno, line in _lines(files, name):
        where = f"{path}: line {lineno}"
        yield lineno, read_json(line, where, error=InvalidCorpus, one_line=True)


def _json_lines(files: BeirBytes, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, obj in _json_values(files, name):
        if not isinstance(obj, dict):
            raise InvalidCorpus(f"{files.path(name)}: line {lineno}: expected a JSON object")
        yield lineno, obj


def _repo(obj: dict[str, Any], where: str) -> str:
    meta = obj.get("metadata")
    if meta is None:
        return ""
    if not isinstance(meta, dict):
        raise InvalidCorpus(f'{where}: "metadata" must be an object')
    repo = meta.get("repo")
    if repo is None:
        return ""
    if not isinstance(repo, str):
        raise InvalidCorpus(f'{where}: "metadata.repo" must be a string')
    problem = text_problem(repo)
    if problem:
        raise InvalidCorpus(f'{where}: "metadata.repo" {problem}')
    return repo


def _read_corpus(files: BeirBytes) -> tuple[DocumentSet, dict[str, str]]:
    """The documents (the ``load`` rule for BEIR lines) and each document's repo, in
    one pass that names the line of every problem."""
    path = files.path(CORPUS_FILE)
    docs: list[Document] = []
    repos: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for lineno, obj in _json_values(files, CORPUS_FILE):
        where = f"{path}: line {lineno}"
        try:
            doc = document_from_line(obj, where)
        except InvalidInput as exc:
            raise InvalidCorpus(str(exc)) from exc
        if doc.id in first_line:
            raise InvalidCorpus(
                f"{where}: duplicate document id {describe(doc.id)} (first on line "
                f"{first_line[doc.id]})"
            )
        first_line[doc.id] = lineno
        assert isinstance(obj, dict)  # document_from_line accepts only objects
        repos[doc.id] = _repo(obj, where)
        docs.append(doc)
    if not docs:
        raise InvalidCorpus(f"{path}: no documents")
    return DocumentSet(docs, where=str(path), checked=True), repos


def _read_queries(files: BeirBytes) -> list[tuple[str, str, str]]:
    """(id, text, own repo) of each question, in file order."""
    path = files.path(QUERIES_FILE)
    out: list[tuple[str, str, str]] = []
    first_line: dict[str, int] = {}
    for lineno, obj in _json_lines(files, QUERIES_FILE):
        where = f"{path}: line {lineno}"
        qid = obj.get("_id")
        if not isinstance(qid, str) or not qid:
            raise InvalidCorpus(f'{where}: a question needs "_id", a non-empty string')
        problem = text_problem(qid)
        if problem:
            raise InvalidCorpus(f"{where}: question id {describe(qid)} {problem}")
        if len(qid.encode("utf-8")) > MAX_ID_BYTES:
            raise InvalidCorpus(f"{where}: question id is longer than {MAX_ID_BYTES} bytes")
        if qid in first_line:
            raise InvalidCorpus(
                f"{where}: duplicate question id {describe(qid)} (first on line {first_line[qid]})"
            )
        first_line[qid] = lineno
        text = obj.get("text")
        if not isinstance(text, str):
            raise InvalidCorpus(f'{where}: question {describe(qid)} needs "text", a string')
        problem = text_problem(text)
        if problem:
            raise InvalidCorpus(f"{where}: question {describe(qid)} text {problem}")
        size = len(text.encode("utf-8"))
        if size > MAX_QUERY_BYTES:
            raise InvalidCorpus(
                f"{where}: question {describe(qid)} is {size} bytes; the limit is {MAX_QUERY_BYTES}"
            )
        out.append((qid, text, _repo(obj, where)))
    if not out:
        raise InvalidCorpus(f"{path}: no questions")
    return out


def _read_qrels(
    files: BeirBytes, questions: set[str], documents: set[str]
) -> dict[str, list[tuple[str, int]]]:
    """Targets (score > 0) per question id, in file order."""
    path = files.path(QRELS_FILE)
    targets: dict[str, list[tuple[str, int]]] = {}
    seen: dict[tuple[str, str], int] = {}
    header_seen = False
    for lineno, line in _lines(files, QRELS_FILE):
        where = f"{path}: line {lineno}"
        # tab-separated as BEIR writes it; any whitespace when there is no tab
        fields = line.split("\t") if "\t" in line else line.split()
        if not header_seen:
            header_seen = True
            if len(fields) == 3 and _int(fields[2]) is None:
                continue  # the header, whatever its column names
            # no header: the first line is already a qrel
        if len(fields) != 3:
            raise InvalidCorpus(
                f"{where}: expected 3 tab-separated fields (query-id, corpus-id, score), "
                f"found {len(fields)}"
            )
        qid, doc_id, raw_score = fields
        score = _int(raw_score)
        if score is None:
            raise InvalidCorpus(f"{where}: score {describe(raw_score)} is not an integer")
        if score > MAX_SCORE:
            raise InvalidCorpus(f"{where}: score {score} is above {MAX_SCORE} (the largest kept)")
        if qid not in questions:
            raise InvalidCorpus(f"{where}: unknown question {describe(qid)} (not in queries.jsonl)")
        if doc_id not in documents:
            raise InvalidCorpus(
                f"{where}: unknown document {describe(doc_id)} (not in corpus.jsonl)"
            )
        if (qid, doc_id) in seen:
            raise InvalidCorpus(
                f"{where}: duplicate qrel for question {describe(qid)} and document "
                f"{describe(doc_id)} (first on line {seen[qid, doc_id]})"
            )
        seen[qid, doc_id] = lineno
        if score > 0:
            targets.setdefault(qid, []).append((doc_id, score))
    if not seen:
        raise InvalidCorpus(f"{path}: no qrels")
    return targets


def _int(text: str) -> int | None:
    """An integer score; "1.0" counts as 1 (some tools write floats)."""
    try:
        return int(text.strip())
    except ValueError:
        pass
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def parse_beir(files: BeirBytes) -> BeirCorpus:
    """Validate and parse the files of a BEIR directory (see the module docstring)."""
    docs, doc_repos = _read_corpus(files)
    queries = _read_queries(files)
    targets = _read_qrels(files, {q[0] for q in queries}, {d.id for d in docs})
    questions: list[Question] = []
    for qid, text, own_repo in queries:
        mine = tuple(targets.get(qid, ()))
        repo = own_repo or next((doc_repos[d] for d, _ in mine if doc_repos[d]), "")
        questions.append(Question(qid, text, repo, mine))
    if not targets:
        raise InvalidCorpus(
            f"{files.path(QRELS_FILE)}: no question has a target (a qrel with score > 0)"
        )
    return BeirCorpus(files.directory, files.sha256, docs, questions)


def read_beir(directory: Path) -> BeirCorpus:
    """Read and validate a BEIR directory (see the module docstring for the rules)."""
    return parse_beir(read_files(directory))
