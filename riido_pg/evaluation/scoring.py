"""The sparse scoring engine behind ``eval``: every document, every question.

The BM25 weights already live in ``riido.postings`` (``idf`` and ``tfn`` per lexeme
and document). The postings of the questions' lexemes are fetched once per column
(``sql/eval_postings.sql``) into a sparse term x document matrix W of ``idf * tfn``,
and the questions become a 0/1 question x term matrix Q. One sparse product
``Q[batch] @ W`` scores a batch of questions against every document; it holds only
the matched documents.

For a single-list policy the first-target rank is a count: 1 + the documents that beat
the best target (higher score, or the same score and a smaller ``doc_ord``, i.e.
document id in byte order), zero-score documents counted from their ids. Interleaved
policies need only the two rankings' prefixes down to each one's first target
(:meth:`Firsts.prefix`). Nothing is sorted in full unless run files are asked for.

Agreement with ``rank_snapshot``: a document's score is summed in lexeme byte order,
the order in which ``sql/rank.sql`` reads the postings (primary-key index order), and
each term is the same float8 product ``idf * tfn``, so the scores, and hence the
orders and ties, are those of the SQL path (tested for every policy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn

__all__ = ["Column", "Firsts", "column", "firsts"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(slots=True)
class Column:
    """Sparse BM25 weights of one column restricted to the questions' lexemes."""

    q: sp.csr_matrix  # questions x terms, 0/1, sorted indices
    w: sp.csr_matrix  # terms x documents, idf * tfn


def column(
    conn: Conn, snapshot_id: str, col: str, lexemes: Sequence[Sequence[str]], n_docs: int
) -> Column:
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
    return Column(q, w)


@dataclass(slots=True)
class Firsts:
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


def firsts(
    scores: sp.csr_matrix, n_docs: int, target_rows: IntArray, target_ords: IntArray
) -> Firsts:
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
    return Firsts(scores, n_docs, per_row(before) + zeros_below + 1, best, best_score, before)
