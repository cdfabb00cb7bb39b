"""Reading and validating a BEIR directory (CONTRACTS §5 "Evaluation input").

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
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from riido_pg.documents import (
    MAX_ID_BYTES,
    MAX_QUERY_BYTES,
    Document,
    _jsonl_documents,
    describe,
    text_problem,
    validate_documents,
)
from riido_pg.errors import InvalidCorpus, InvalidInput

__all__ = [
    "CORPUS_FILE",
    "FILES",
    "QRELS_FILE",
    "QUERIES_FILE",
    "BeirCorpus",
    "Question",
    "corpus_sha256",
    "read_beir",
]

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
#: The files of a BEIR directory, in digest order.
FILES = (CORPUS_FILE, QUERIES_FILE, QRELS_FILE)
QRELS_HEADER = "query-id\tcorpus-id\tscore"


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
    documents: list[Document]
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


def corpus_sha256(directory: Path) -> str:
    """sha256 of corpus.jsonl, queries.jsonl and qrels/test.tsv, concatenated in that order."""
    if not directory.is_dir():
        raise InvalidCorpus(f"{directory}: not a directory (expected a BEIR directory)")
    h = hashlib.sha256()
    for name in FILES:
        path = _file(directory, name)
        try:
            with path.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError as exc:
            raise InvalidCorpus(f"{path}: cannot read: {exc.strerror}") from exc
    return h.hexdigest()


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines, decoded as UTF-8."""
    try:
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidCorpus(
                        f"{path}: line {lineno}: invalid UTF-8 (byte {exc.start})"
                    ) from exc
                if line.strip():
                    yield lineno, line.rstrip("\r\n")
    except OSError as exc:
        raise InvalidCorpus(f"{path}: cannot read: {exc.strerror}") from exc


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in _lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidCorpus(f"{path}: line {lineno}: malformed JSON: {exc.msg}") from exc
        except RecursionError as exc:
            raise InvalidCorpus(f"{path}: line {lineno}: JSON nested too deeply") from exc
        if not isinstance(obj, dict):
            raise InvalidCorpus(f"{path}: line {lineno}: expected a JSON object")
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


def _read_corpus(path: Path) -> tuple[list[Document], dict[str, str]]:
    """The documents (the ``load`` reader) and each document's repo."""
    try:
        docs = list(_jsonl_documents(path))
    except InvalidCorpus:
        raise
    except InvalidInput as exc:
        raise InvalidCorpus(str(exc)) from exc
    except OSError as exc:
        raise InvalidCorpus(f"{path}: cannot read: {exc.strerror}") from exc
    # Second, light pass for what the document reader does not keep: line numbers
    # (duplicate ids) and metadata.repo. The first pass validated every line.
    repos: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for lineno, obj in _json_lines(path):
        doc_id = obj["_id"] if "_id" in obj and "id" not in obj else obj["id"]
        where = f"{path}: line {lineno}"
        if doc_id in first_line:
            raise InvalidCorpus(
                f"{where}: duplicate document id {describe(doc_id)} (first on line "
                f"{first_line[doc_id]})"
            )
        first_line[doc_id] = lineno
        repos[doc_id] = _repo(obj, where)
    if not docs:
        raise InvalidCorpus(f"{path}: no documents")
    try:
        docs = validate_documents(docs, where=str(path))
    except InvalidInput as exc:  # pragma: no cover - both checked above
        raise InvalidCorpus(str(exc)) from exc
    return docs, repos


def _read_queries(path: Path) -> list[tuple[str, str, str]]:
    """(id, text, own repo) of each question, in file order."""
    out: list[tuple[str, str, str]] = []
    first_line: dict[str, int] = {}
    for lineno, obj in _json_lines(path):
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
    path: Path, questions: set[str], documents: set[str]
) -> dict[str, list[tuple[str, int]]]:
    """Targets (score > 0) per question id, in file order."""
    targets: dict[str, list[tuple[str, int]]] = {}
    seen: dict[tuple[str, str], int] = {}
    header_seen = False
    for lineno, line in _lines(path):
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


def read_beir(directory: Path) -> BeirCorpus:
    """Read and validate a BEIR directory (see the module docstring for the rules)."""
    digest = corpus_sha256(directory)
    docs, doc_repos = _read_corpus(directory / CORPUS_FILE)
    queries = _read_queries(directory / QUERIES_FILE)
    targets = _read_qrels(directory / QRELS_FILE, {q[0] for q in queries}, {d.id for d in docs})
    questions: list[Question] = []
    for qid, text, own_repo in queries:
        mine = tuple(targets.get(qid, ()))
        repo = own_repo or next((doc_repos[d] for d, _ in mine if doc_repos[d]), "")
        questions.append(Question(qid, text, repo, mine))
    if not targets:
        raise InvalidCorpus(
            f"{directory / QRELS_FILE}: no question has a target (a qrel with score > 0)"
        )
    return BeirCorpus(directory, digest, docs, questions)
