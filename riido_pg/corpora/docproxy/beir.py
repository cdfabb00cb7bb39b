"""The docproxy corpus as a BEIR directory: documents, questions grouped by summary,
qrels, rendered byte for byte and written (the rules are in
:mod:`riido_pg.corpora.docproxy`)."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from riido_pg.corpora.docproxy.functions import FunctionRecord
from riido_pg.errors import InvalidCorpus
from riido_pg.files import output_dir, write_output

__all__ = ["BeirFiles", "DocproxyStats", "assemble", "question_id", "write_beir"]


@dataclass(frozen=True)
class DocproxyStats:
    """What :func:`build_docproxy` wrote."""

    documents: int
    questions: int
    qrels: int
    documents_per_repo: dict[str, int] = field(default_factory=dict)
    questions_per_repo: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BeirFiles:
    """The three files of a BEIR directory, rendered."""

    corpus: bytes
    queries: bytes
    qrels: bytes
    stats: DocproxyStats


def _json_line(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


def _document_json(record: FunctionRecord) -> dict[str, object]:
    return {
        "_id": record.doc_id,
        "text": record.text,
        "metadata": {"repo": record.repo},
    }


def question_id(repo: str, text: str) -> str:
    """``q-REPO-`` and the first 12 hex digits of the text's sha256."""
    return f"q-{repo}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


def assemble(records: Iterable[FunctionRecord]) -> BeirFiles:
    """Render documents, questions (grouped per repo by summary) and qrels."""
    docs = sorted(records, key=lambda r: (r.repo, r.path, r.lineno, r.qualname))
    doc_ids = [r.doc_id for r in docs]
    if len(set(doc_ids)) != len(doc_ids):
        raise InvalidCorpus("docproxy: two functions share a document id")
    targets: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in docs:
        if record.summary is not None:
            targets[(record.repo, record.summary)].append(record.doc_id)
    questions = sorted(
        (question_id(repo, text), repo, text, ids) for (repo, text), ids in targets.items()
    )
    if len({q[0] for q in questions}) != len(questions):
        raise InvalidCorpus("docproxy: two questions share an id (sha256 prefix collision)")
    corpus = "".join(_json_line(_document_json(record)) for record in docs)
    queries = "".join(
        _json_line({"_id": qid, "text": text, "metadata": {"repo": repo}})
        for qid, repo, text, _ in questions
    )
    qrel_lines = [f"{qid}\t{doc_id}\t1\n" for qid, _, _, ids in questions for doc_id in ids]
    per_repo_docs: dict[str, int] = defaultdict(int)
    per_repo_questions: dict[str, int] = defaultdict(int)
    for record in docs:
        per_repo_docs[record.repo] += 1
    for _, repo, _, _ in questions:
        per_repo_questions[repo] += 1
    stats = DocproxyStats(
        documents=len(docs),
        questions=len(questions),
        qrels=len(qrel_lines),
        documents_per_repo=dict(sorted(per_repo_docs.items())),
        questions_per_repo=dict(sorted(per_repo_questions.items())),
    )
    qrels = "query-id\tcorpus-id\tscore\n" + "".join(qrel_lines)
    return BeirFiles(corpus.encode(), queries.encode(), qrels.encode(), stats)


def write_beir(out_dir: Path, files: BeirFiles) -> None:
    """Write the three files, each replaced whole (``out_dir`` is created if missing;
    its parent must exist)."""
    output_dir(out_dir)
    output_dir(out_dir / "qrels")
    write_output(out_dir / "corpus.jsonl", files.corpus)
    write_output(out_dir / "queries.jsonl", files.queries)
    write_output(out_dir / "qrels" / "test.tsv", files.qrels)
