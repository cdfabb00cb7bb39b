"""Batch evaluation of a stored corpus under every policy (CONTRACTS §5 "Evaluation").

Storing
    :func:`store_corpus` reads a BEIR directory (:mod:`riido_pg.beir`), loads its
    documents as the snapshot ``beir-<first 16 hex of the corpus sha256>-<text config>``
    and stores its questions and targets (tables ``riido.questions``,
    ``riido.targets``, ``riido.eval_corpora``), all in one transaction under the
    snapshot's lock: an error leaves nothing behind. When that snapshot already holds
    this corpus, nothing is read or written again.

Evaluating
    :func:`evaluate` ranks every document for every question with a target, under
    each policy, and keeps the rank of the question's first target. It runs in one
    read-only repeatable-read transaction and reads only stored data, so evaluating a
    directory and evaluating its snapshot id give the same output.

How it is fast
    The BM25 weights already live in ``riido.postings`` (``idf`` and ``tfn`` per
    lexeme and document). The questions are tokenized in one statement
    (``sql/eval_question_lexemes.sql``), the postings of their lexemes are fetched
    once per column (``sql/eval_postings.sql``) into a sparse term x document matrix
    W of ``idf * tfn``, and the questions become a 0/1 question x term matrix Q. One
    sparse product ``Q[batch] @ W`` scores a batch of questions against every
    document; it holds only the matched documents (batches of at most
    ``BATCH_CELLS`` question x document cells keep memory bounded). For ``bm25`` and
    ``identifier_bm25`` the first-target rank is a count: 1 + the documents that beat
    the best target (higher score, or the same score and a smaller ``doc_ord``, i.e.
    document id in byte order), zero-score documents counted from their ids. The
    interleaved policies need only the two rankings' prefixes down to each one's
    first target (exactly the documents counted above, sorted), fed to
    :func:`riido_pg.interleave.iter_interleave` until a target comes out. Nothing is
    sorted in full unless run files are asked for.

Agreement with ``rank_snapshot``
    A document's score is summed in lexeme byte order, the order in which
    ``sql/rank.sql`` reads the postings (primary-key index order), and each term is
    the same float8 product ``idf * tfn``, so the scores, and hence the orders and
    ties, are those of the SQL path (tested for every policy). Identifier policies
    fall back to ``bm25`` for a question outside the identifier limits, as
    ``rank_snapshot`` does (``corpus.identifier_out_of_scope`` counts them).

Run files (``run_dir``)
    One TREC run per policy, ``<policy>.trec``: ``qid Q0 docid rank score tag``, the
    first ``run_depth`` documents of each ranking (default 1000, the TREC norm;
    metrics always use the full ranking). ``score`` is ``N - rank + 1`` (N documents)
    for every policy: strictly decreasing, so tools that re-sort by score (trec_eval,
    ir_measures break score ties by document id *descending*) see exactly our order.
    ``tag`` is the policy name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import psycopg
import scipy.sparse as sp

from riido_pg.beir import BeirCorpus, corpus_sha256, read_beir
from riido_pg.errors import (
    ConflictingOptions,
    InvalidCorpus,
    InvalidInput,
    SnapshotExists,
    SnapshotNotFound,
)
from riido_pg.interleave import iter_interleave
from riido_pg.metrics import MEASURE_NAMES, aggregate, first_target_rank, records, rounded
from riido_pg.ranking import (
    BM25,
    EXTERNAL_HINTS_BASELINE_FIRST,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
    OUT_OF_SCOPE,
    QueryTerms,
)
from riido_pg.resources import sql_text
from riido_pg.splitting import split_identifiers
from riido_pg.store import (
    DEFAULT_TEXT_CONFIG,
    _advisory_lock,
    check_text_config,
    get_snapshot,
    load_snapshot,
)

__all__ = [
    "DEFAULT_RUN_DEPTH",
    "EVAL_POLICIES",
    "Evaluation",
    "QuestionResult",
    "StoredCorpus",
    "check_policies",
    "evaluate",
    "evaluation_json",
    "snapshot_id_for",
    "store_corpus",
]

Conn = psycopg.Connection[Any]
#: ``progress(phase, done, total)``; phases: those of load_snapshot, "evaluating questions".
Progress = Callable[[str, int, int], None]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: The policies ``eval`` runs by default, in CONTRACTS §3 table order.
EVAL_POLICIES = (
    BM25,
    IDENTIFIER_BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_AUXILIARY_FIRST,
)
DEFAULT_RUN_DEPTH = 1000
#: Question x document cells per batch: at most 2M stored scores (~25 MB) per column.
BATCH_CELLS = 1 << 21
PROGRESS_PHASE = "evaluating questions"


# --------------------------------------------------------------------------- storing


@dataclass(frozen=True, slots=True)
class StoredCorpus:
    snapshot_id: str
    corpus_sha256: str
    #: "stored" (documents and questions written now) or "reused" (already stored)
    action: str


def snapshot_id_for(sha256: str, text_config: str) -> str:
    """The snapshot id of a BEIR corpus: its digest's first 16 hex and the config."""
    return f"beir-{sha256[:16]}-{text_config}"


def _stored(conn: Conn, snapshot_id: str, sha256: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM riido.eval_corpora AS e "
        "JOIN riido.snapshots AS s ON s.snapshot_id = e.snapshot_id "
        "WHERE e.snapshot_id = %s AND e.corpus_sha256 = %s AND s.state = 'ready' "
        "AND s.content_digest = e.content_digest",
        (snapshot_id, sha256),
    ).fetchone()
    return row is not None


def _write_questions(conn: Conn, snapshot_id: str, corpus: BeirCorpus) -> None:
    conn.execute("DELETE FROM riido.eval_corpora WHERE snapshot_id = %s", (snapshot_id,))
    conn.execute("DELETE FROM riido.questions WHERE snapshot_id = %s", (snapshot_id,))
    cur = conn.cursor()
    with cur.copy("COPY riido.questions (snapshot_id, question_id, text, repo) FROM STDIN") as cp:
        for q in corpus.questions:
            cp.write_row((snapshot_id, q.id, q.text, q.repo))
    with cur.copy("COPY riido.targets (snapshot_id, question_id, doc_id, score) FROM STDIN") as cp:
        for q in corpus.questions:
            for doc_id, score in q.targets:
                cp.write_row((snapshot_id, q.id, doc_id, score))
    conn.execute(
        "INSERT INTO riido.eval_corpora (snapshot_id, corpus_sha256, content_digest) "
        "SELECT snapshot_id, %s, content_digest FROM riido.snapshots WHERE snapshot_id = %s",
        (corpus.sha256, snapshot_id),
    )


def store_corpus(
    conn: Conn,
    directory: Path,
    *,
    text_config: str = DEFAULT_TEXT_CONFIG,
    progress: Progress | None = None,
) -> StoredCorpus:
    """Store a BEIR directory as an evaluation corpus, or find it already stored.

    The snapshot and the questions are written in one transaction, holding the
    snapshot's advisory lock until it commits: an error stores nothing.
    """
    sha = corpus_sha256(directory)
    cfg = check_text_config(conn, text_config)
    snapshot_id = snapshot_id_for(sha, cfg)
    if _stored(conn, snapshot_id, sha):
        return StoredCorpus(snapshot_id, sha, "reused")
    corpus = read_beir(directory)
    if corpus.sha256 != sha:
        raise InvalidCorpus(f"{directory}: changed while being read; run eval again")
    with _advisory_lock(conn, snapshot_id), conn.transaction():
        try:
            load_snapshot(conn, snapshot_id, corpus.documents, text_config=cfg, progress=progress)
        except SnapshotExists as exc:
            raise SnapshotExists(
                f"snapshot {snapshot_id!r} exists with other documents; drop it with "
                f"`riido-pg snapshots drop {snapshot_id}` and run eval again"
            ) from exc
        _write_questions(conn, snapshot_id, corpus)
    return StoredCorpus(snapshot_id, sha, "stored")


# ------------------------------------------------------------------------ evaluating


def check_policies(policies: Sequence[str] | None) -> tuple[str, ...]:
    """The policies to evaluate, deduplicated in table order (default: all four)."""
    if not policies:
        return EVAL_POLICIES
    for p in policies:
        if p == OUT_OF_SCOPE:
            raise ConflictingOptions(f"{OUT_OF_SCOPE} is a result label, not a policy to evaluate")
        if p == EXTERNAL_HINTS_BASELINE_FIRST:
            raise ConflictingOptions(
                f"eval does not run {EXTERNAL_HINTS_BASELINE_FIRST} (it needs a hints file "
                "per question); choose among " + ", ".join(EVAL_POLICIES)
            )
        if p not in EVAL_POLICIES:
            raise ConflictingOptions(
                f"unknown policy {p!r}; choose among {', '.join(EVAL_POLICIES)}"
            )
    return tuple(p for p in EVAL_POLICIES if p in policies)


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One evaluated question: the rank of its first target under each policy
    (always including ``bm25``, the baseline)."""

    question_id: str
    repo: str
    ranks: dict[str, int]
    identifier_in_scope: bool


@dataclass(frozen=True, slots=True)
class Evaluation:
    snapshot_id: str
    corpus_sha256: str
    documents: int
    text_config: str
    k1: float
    b: float
    policies: tuple[str, ...]
    #: Evaluated questions (those with targets), in question id byte order.
    results: list[QuestionResult]
    #: Stored questions without targets: not evaluated.
    skipped: int
    run_files: list[Path] = field(default_factory=list)

    @property
    def out_of_scope(self) -> int:
        return sum(1 for r in self.results if not r.identifier_in_scope)

    def metrics(
        self, results: Sequence[QuestionResult] | None = None
    ) -> dict[str, dict[str, float]]:
        """Mean of each measure, per policy (unrounded)."""
        chosen = self.results if results is None else results
        return {
            p: aggregate(m for r in chosen for m in records(r.question_id, r.ranks[p]))
            for p in self.policies
        }

    def versus_baseline(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for p in self.policies:
            if p == BM25:
                continue
            counts = {"improved": 0, "worsened": 0, "unchanged": 0}
            for r in self.results:
                mine, base = r.ranks[p], r.ranks[BM25]
                key = "improved" if mine < base else "worsened" if mine > base else "unchanged"
                counts[key] += 1
            out[p] = counts
        return out

    def repos(self) -> dict[str, list[QuestionResult]]:
        """Evaluated questions per non-empty repo."""
        by_repo: dict[str, list[QuestionResult]] = {}
        for r in self.results:
            if r.repo:
                by_repo.setdefault(r.repo, []).append(r)
        return by_repo

    def to_dict(self) -> dict[str, Any]:
        """The §5 output object, figures rounded to 6 decimals."""

        def table(means: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
            return {p: {m: rounded(v[m]) for m in MEASURE_NAMES} for p, v in means.items()}

        return {
            "corpus": {
                "snapshot_id": self.snapshot_id,
                "documents": self.documents,
                "questions": len(self.results),
                "skipped_questions": self.skipped,
                "identifier_out_of_scope": self.out_of_scope,
                "sha256": self.corpus_sha256,
            },
            "config": {"text_config": self.text_config, "k1": self.k1, "b": self.b},
            "policies": table(self.metrics()),
            "versus_baseline": self.versus_baseline(),
            "per_repo": {repo: table(self.metrics(rs)) for repo, rs in self.repos().items()},
        }


def evaluation_json(evaluation: Evaluation | dict[str, Any]) -> str:
    """The output file: keys sorted, 6-decimal figures, byte-identical on re-run.
    Takes an Evaluation or its ``to_dict()``."""
    data = evaluation.to_dict() if isinstance(evaluation, Evaluation) else evaluation
    return json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


@dataclass(slots=True)
class _Column:
    """Sparse BM25 weights of one column restricted to the questions' lexemes."""

    q: sp.csr_matrix  # questions x terms, 0/1, sorted indices
    w: sp.csr_matrix  # terms x documents, idf * tfn


def _column(
    conn: Conn, snapshot_id: str, col: str, lexemes: Sequence[Sequence[str]], n_docs: int
) -> _Column:
    wanted = sorted({x for lx in lexemes for x in lx})
    rows = conn.execute(
        sql_text("eval_postings"),
        {"snapshot_id": snapshot_id, "col": col, "lexemes": wanted},
        binary=True,
    ).fetchall()
    term: dict[str, int] = {str(r[0]): i for i, r in enumerate(rows)}
    lengths = np.fromiter((len(r[2]) for r in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    total = int(indptr[-1])
    indices = np.fromiter((o for r in rows for o in r[2]), dtype=np.int32, count=total)
    tfn = np.fromiter((t for r in rows for t in r[3]), dtype=np.float64, count=total)
    idf = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
    data = np.repeat(idf, lengths) * tfn  # the float8 product rank.sql sums
    w = sp.csr_matrix((data, indices, indptr), shape=(len(rows), n_docs))
    q_indptr = [0]
    q_indices: list[int] = []
    for lx in lexemes:
        q_indices.extend(sorted(term[x] for x in set(lx) if x in term))
        q_indptr.append(len(q_indices))
    q = sp.csr_matrix(
        (np.ones(len(q_indices)), np.asarray(q_indices, dtype=np.int32), np.asarray(q_indptr)),
        shape=(len(lexemes), len(rows)),
    )
    q.has_sorted_indices = True
    return _Column(q, w)


@dataclass(slots=True)
class _Firsts:
    """One column's scores for a batch of questions (a sparse questions x documents
    matrix: only matched documents, scores > 0) and, per question, its first target:
    rank, doc_ord and score. Documents not stored score 0."""

    scores: sp.csr_matrix
    n_docs: int
    ranks: IntArray
    best: IntArray
    best_score: FloatArray
    before: BoolArray  # per stored score: does that document rank before the first target?

    def _row(self, i: int) -> tuple[IntArray, FloatArray, slice]:
        sl = slice(int(self.scores.indptr[i]), int(self.scores.indptr[i + 1]))
        return self.scores.indices[sl], self.scores.data[sl], sl

    def _zeros(self, ords: IntArray, stop: int, count: int | None = None) -> list[int]:
        """Ascending doc_ords below ``stop`` that score 0 (not in ``ords``), at most ``count``."""
        if count is not None and count <= 0:
            return []
        free = np.ones(stop, dtype=bool)
        free[ords[ords < stop]] = False
        zeros = np.flatnonzero(free)
        return (zeros if count is None else zeros[:count]).tolist()  # type: ignore[no-any-return]

    def prefix(self, i: int) -> list[int]:
        """The ranking down to (and including) question i's first target."""
        ords, data, sl = self._row(i)
        mask = self.before[sl]
        o, d = ords[mask], data[mask]
        ahead = o[np.lexsort((o, -d))].tolist()
        if self.best_score[i] == 0.0:  # the zero-score documents before it, in id order
            ahead += self._zeros(ords, int(self.best[i]))
        return [*ahead, int(self.best[i])]

    def order(self, i: int, depth: int) -> list[int]:
        """The first ``depth`` documents of question i's ranking."""
        ords, data, _ = self._row(i)
        ranked: list[int] = ords[np.lexsort((ords, -data))][:depth].tolist()
        return ranked + self._zeros(ords, self.n_docs, depth - len(ranked))


def _firsts(
    scores: sp.csr_matrix, n_docs: int, target_rows: IntArray, target_ords: IntArray
) -> _Firsts:
    """Score desc, then doc_ord asc: a target's rank is 1 + the documents that beat it.

    Works on the stored (non-zero) scores only; the zero-score documents before a
    zero-score target are counted from doc_ords.
    """
    indptr = scores.indptr.astype(np.int64)
    counts = np.diff(indptr)
    t_scores = np.asarray(scores[target_rows, target_ords], dtype=np.float64).ravel()
    order = np.lexsort((target_ords, -t_scores, target_rows))
    rows_sorted = target_rows[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = rows_sorted[1:] != rows_sorted[:-1]
    pick = order[first]  # one per row, rows ascending: every row has a target
    best_score = t_scores[pick]
    best = target_ords[pick]
    entry_best = np.repeat(best_score, counts)
    lower = scores.indices < np.repeat(best, counts)
    before = (scores.data > entry_best) | ((scores.data == entry_best) & lower)

    def per_row(mask: BoolArray) -> IntArray:
        total = np.zeros(len(mask) + 1, dtype=np.int64)
        np.cumsum(mask, out=total[1:])
        return total[indptr[1:]] - total[indptr[:-1]]  # type: ignore[no-any-return]

    # a zero-score target: the zero-score documents with a smaller doc_ord are ahead too
    zeros_below = np.where(best_score == 0.0, best - per_row(lower), 0)
    return _Firsts(scores, n_docs, per_row(before) + zeros_below + 1, best, best_score, before)


class _RunWriter:
    """TREC run files, written to temporary files and renamed into place when complete
    (an error leaves no partial run file)."""

    def __init__(
        self, stack: ExitStack, run_dir: Path, policies: Sequence[str], doc_ids: list[str]
    ) -> None:
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInput(
                f"{run_dir}: cannot create the run directory: {exc.strerror}"
            ) from exc
        self.doc_ids = doc_ids
        self.files: dict[str, tuple[IO[str], Path, Path]] = {}
        for p in policies:
            tmp = run_dir / f".{p}.trec.{os.getpid()}.tmp"
            stack.callback(tmp.unlink, missing_ok=True)
            fh = stack.enter_context(tmp.open("w", encoding="utf-8", newline="\n"))
            self.files[p] = (fh, tmp, run_dir / f"{p}.trec")

    def write(self, policy: str, qid: str, order: Sequence[int]) -> None:
        ids, n = self.doc_ids, len(self.doc_ids)
        self.files[policy][0].write(
            "".join(
                f"{qid} Q0 {ids[d]} {rank} {n - rank + 1} {policy}\n"
                for rank, d in enumerate(order, start=1)
            )
        )

    def finish(self) -> list[Path]:
        out = []
        for fh, tmp, final in self.files.values():
            fh.close()
            os.replace(tmp, final)
            out.append(final)
        return out


@dataclass(frozen=True, slots=True)
class _StoredQuestion:
    id: str
    text: str
    repo: str
    targets: tuple[int, ...]


def _load_questions(conn: Conn, snapshot_id: str) -> list[_StoredQuestion]:
    rows = conn.execute(sql_text("eval_questions"), {"snapshot_id": snapshot_id}).fetchall()
    return [_StoredQuestion(str(r[0]), str(r[1]), str(r[2]), tuple(r[3])) for r in rows]


def _eval_corpus(conn: Conn, snapshot_id: str) -> tuple[str, int, str, float, float]:
    """(corpus sha256, documents, text config, k1, b) of a snapshot with stored questions."""
    try:
        get_snapshot(conn, snapshot_id)
    except SnapshotNotFound as exc:
        raise SnapshotNotFound(
            f"no snapshot {snapshot_id!r}; `riido-pg eval BEIR_DIR` stores a corpus "
            "(`riido-pg snapshots list` shows the stored ones)"
        ) from exc
    row = conn.execute(
        "SELECT e.corpus_sha256, s.document_count, s.text_config, s.k1, s.b, "
        "       e.content_digest = s.content_digest "
        "FROM riido.snapshots AS s LEFT JOIN riido.eval_corpora AS e USING (snapshot_id) "
        "WHERE s.snapshot_id = %s",
        (snapshot_id,),
    ).fetchone()
    assert row is not None
    if row[0] is None:
        raise InvalidInput(
            f"snapshot {snapshot_id!r} has no stored questions; evaluate a BEIR directory "
            "with `riido-pg eval BEIR_DIR`, which stores them"
        )
    if not row[5]:
        raise InvalidInput(
            f"snapshot {snapshot_id!r} was replaced after its questions were stored; drop it "
            f"with `riido-pg snapshots drop {snapshot_id}` and evaluate the BEIR directory again"
        )
    return str(row[0]), int(row[1]), str(row[2]), float(row[3]), float(row[4])


def evaluate(
    conn: Conn,
    snapshot_id: str,
    *,
    policies: Sequence[str] | None = None,
    progress: Progress | None = None,
    run_dir: Path | None = None,
    run_depth: int = DEFAULT_RUN_DEPTH,
) -> Evaluation:
    """Evaluate a snapshot's stored questions under ``policies`` (default: all four).

    With ``run_dir``, also writes one TREC run file per policy (see module docstring).
    """
    chosen = check_policies(policies)
    if run_depth < 1:
        raise InvalidInput("the run depth must be at least 1")
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        sha, n_docs, cfg, k1, b = _eval_corpus(conn, snapshot_id)
        stored = _load_questions(conn, snapshot_id)
        questions = [q for q in stored if q.targets]
        if not questions:
            raise InvalidInput(f"snapshot {snapshot_id!r} has no question with a target")
        idents = [split_identifiers(q.text) for q in questions]
        lexemes = conn.execute(
            sql_text("eval_question_lexemes"),
            {"text_config": cfg, "raw": [q.text for q in questions], "ident": idents},
        ).fetchall()
        terms = [
            QueryTerms(list(raw), list(ident), ident_text)
            for (raw, ident), ident_text in zip(lexemes, idents, strict=True)
        ]
        need_ident = any(p != BM25 for p in chosen)
        raw_col = _column(conn, snapshot_id, "raw", [t.raw for t in terms], n_docs)
        ident_col = (
            _column(conn, snapshot_id, "ident", [t.ident for t in terms], n_docs)
            if need_ident
            else None
        )
        doc_ids: list[str] = []
        if run_dir is not None:
            doc_ids = [
                str(r[0])
                for r in conn.execute(
                    "SELECT doc_id FROM riido.documents WHERE snapshot_id = %s ORDER BY doc_ord",
                    (snapshot_id,),
                )
            ]
    results: list[QuestionResult] = []
    run_files: list[Path] = []
    with ExitStack() as stack:
        writer = None
        if run_dir is not None:
            writer = _RunWriter(stack, run_dir, chosen, doc_ids)
        batch = max(1, BATCH_CELLS // max(1, n_docs))
        total = len(questions)
        for start in range(0, total, batch):
            stop = min(total, start + batch)
            results.extend(
                _evaluate_batch(
                    questions[start:stop],
                    terms[start:stop],
                    raw_col,
                    ident_col,
                    start,
                    stop,
                    chosen,
                    writer,
                    run_depth,
                )
            )
            if progress:
                progress(PROGRESS_PHASE, stop, total)
        if writer is not None:
            run_files = writer.finish()
    return Evaluation(
        snapshot_id,
        sha,
        n_docs,
        cfg,
        k1,
        b,
        chosen,
        results,
        skipped=len(stored) - len(questions),
        run_files=run_files,
    )


def _evaluate_batch(
    questions: Sequence[_StoredQuestion],
    terms: Sequence[QueryTerms],
    raw_col: _Column,
    ident_col: _Column | None,
    start: int,
    stop: int,
    policies: Sequence[str],
    writer: _RunWriter | None,
    depth: int,
) -> Iterator[QuestionResult]:
    target_rows = np.fromiter(
        (i for i, q in enumerate(questions) for _ in q.targets), dtype=np.int64
    )
    target_ords = np.fromiter((t for q in questions for t in q.targets), dtype=np.int64)
    n_docs = int(raw_col.w.shape[1])

    def firsts(col: _Column) -> _Firsts:
        return _firsts(col.q[start:stop] @ col.w, n_docs, target_rows, target_ords)

    raw = firsts(raw_col)
    ident = firsts(ident_col) if ident_col is not None else None
    for i, (q, t) in enumerate(zip(questions, terms, strict=True)):
        in_scope = t.identifier_in_scope
        targets = set(q.targets)
        base = int(raw.ranks[i])
        ranks = {BM25: base}
        for p in policies:
            if p == BM25:
                continue
            if not in_scope or ident is None:
                ranks[p] = base  # rank_snapshot falls back to bm25 (OUT_OF_SCOPE label)
            elif p == IDENTIFIER_BM25:
                ranks[p] = int(ident.ranks[i])
            elif p == IDENTIFIER_BM25_BASELINE_FIRST:
                ranks[p] = first_target_rank(
                    iter_interleave(raw.prefix(i), ident.prefix(i)), targets
                )
            else:
                ranks[p] = first_target_rank(
                    iter_interleave(ident.prefix(i), raw.prefix(i)), targets
                )
        if writer is not None:
            _write_runs(writer, q.id, i, raw, ident if in_scope else None, policies, depth)
        yield QuestionResult(q.id, q.repo, ranks, in_scope)


def _write_runs(
    writer: _RunWriter,
    qid: str,
    i: int,
    raw: _Firsts,
    ident: _Firsts | None,
    policies: Sequence[str],
    depth: int,
) -> None:
    raw_order = raw.order(i, depth)
    ident_order = ident.order(i, depth) if ident is not None else None
    for p in policies:
        if p == BM25 or ident_order is None:
            order = raw_order
        elif p == IDENTIFIER_BM25:
            order = ident_order
        elif p == IDENTIFIER_BM25_BASELINE_FIRST:
            order = list(_take(iter_interleave(raw_order, ident_order), depth))
        else:
            order = list(_take(iter_interleave(ident_order, raw_order), depth))
        writer.write(p, qid, order)


def _take(items: Iterator[int], n: int) -> Iterator[int]:
    for k, item in enumerate(items):
        if k >= n:
            return
        yield item
