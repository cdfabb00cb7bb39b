"""The sparse scoring engine behind ``eval``: every document, every question.

Every term weight of the questions' lexemes comes from SQL (``sql/eval_postings.sql``:
the same fragment :func:`~riido_pg.ranking.rank_snapshot` sums, as integer units of
2^-40), once per column, into a sparse term x document matrix W; the questions
become a 0/1 question x term matrix Q, and one sparse product ``Q[batch] @ W`` scores
a batch of questions against every document. Integer units add up to the same exact
score in any order, so the scores, and hence the orders and ties, are those of the
SQL path (tested for every policy).

Documents are the matrix's columns in id byte order (:class:`Documents`): the order
ties are broken in, whatever segments a snapshot's documents live in. For a
single-list policy the first-target rank is a count: 1 + the documents that beat the
best target (a higher score, or the same score and a smaller id), zero-score
documents counted from their places. Interleaved policies need only the two
rankings' prefixes down to each one's first target (:meth:`FirstTargets.prefixes`, a
batch at once, walked by :mod:`riido_pg.evaluation.walks`). Nothing
is sorted in full unless run files are asked for. A policy's combiner reads what it
needs from a :class:`Batch`, which implements the protocol ranking declares for it
(:class:`riido_pg.ranking.policy.skeleton.EvalScores`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from psycopg import sql

from riido_pg.evaluation.walks import Pair
from riido_pg.ranking import bm25
from riido_pg.ranking.inputs import MODEL
from riido_pg.server.connect import Conn
from riido_pg.storage.fragments import HELD
from riido_pg.storage.snapshots import Snapshot

if TYPE_CHECKING:  # imported where used: see riido_pg.background
    import scipy.sparse as sp

__all__ = [
    "Batch",
    "ColumnWeights",
    "Documents",
    "FirstTargets",
    "column_weights",
    "documents",
    "first_targets",
    "send_column_weights",
    "units",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class Documents:
    """A snapshot's documents in id byte order: ``ords[i]`` is the doc_ord of the
    i-th; :meth:`place` maps doc_ords to those places."""

    def __init__(self, ords: IntArray) -> None:
        self.ords = ords
        self._table = np.full(int(ords.max(initial=-1)) + 1, -1, dtype=np.int64)
        self._table[ords] = np.arange(len(ords), dtype=np.int64)

    @property
    def count(self) -> int:
        return len(self.ords)

    def place(self, ords: npt.ArrayLike) -> IntArray:
        return self._table[np.asarray(ords, dtype=np.int64)]

    def mask(self, ords: npt.ArrayLike) -> BoolArray:
        """Per place: is its document among ``ords`` (doc_ords the snapshot may not
        hold, which are left out)?"""
        o = np.asarray(ords, dtype=np.int64)
        o = o[(o >= 0) & (o < len(self._table))]
        places = self._table[o]
        out = np.zeros(self.count, dtype=bool)
        out[places[places >= 0]] = True
        return out


def documents(conn: Conn, snap: Snapshot) -> Documents:
    """The snapshot's documents in id order (a self-contained snapshot numbers them
    so already: nothing to read)."""
    if len(snap.segments) == 1 and snap.removed == 0:
        row = conn.execute(
            "SELECT first_ord FROM riido.segments WHERE segment_id = %s", (snap.segments[0],)
        ).fetchone()
        if row is not None:
            first = int(row[0])
            return Documents(np.arange(first, first + snap.documents, dtype=np.int64))
    statement = sql.SQL(
        "WITH {held} SELECT coalesce(array_agg(h.doc_ord ORDER BY h.doc_id), '{{}}') FROM held AS h"
    ).format(held=HELD)
    row = conn.execute(statement, {"snapshot_id": snap.snapshot_id}, binary=True).fetchone()
    assert row is not None
    return Documents(np.asarray(row[0], dtype=np.int64))


@dataclass(slots=True)
class ColumnWeights:
    """Sparse BM25 weights of one column restricted to the questions' lexemes."""

    questions: sp.csr_matrix  # questions x terms, 0/1, sorted indices
    by_document: sp.csr_matrix  # documents (id order) x terms, integer units

    @property
    def weights(self) -> sp.csr_matrix:
        """Terms x documents."""
        return self.by_document.T.tocsr()

    def scores(self, start: int, stop: int) -> sp.csr_matrix:
        """Questions ``start:stop`` x documents: each question's scores, indices
        sorted. Computed as documents x questions and transposed (a transpose sorts
        the indices in one pass, cheaper than sorting the product's rows)."""
        return (self.by_document @ self.questions[start:stop].T.tocsr()).T.tocsr()


def column_weights(
    conn: Conn, snap: Snapshot, col: str, lexemes: Sequence[Sequence[str]], docs: Documents
) -> ColumnWeights:
    """One column's weights for the questions' ``lexemes`` (one list per question)."""
    return send_column_weights(conn, snap, col, lexemes, docs)()


def send_column_weights(
    conn: Conn, snap: Snapshot, col: str, lexemes: Sequence[Sequence[str]], docs: Documents
) -> Callable[[], ColumnWeights]:
    """Send :func:`column_weights`'s statement; the call returned reads its rows.
    In pipeline mode the server runs it while the caller reads earlier results."""
    wanted = sorted({x for lx in lexemes for x in lx})
    target = snap.target
    query = bm25.eval_postings(target, col, wanted)
    cursor = conn.execute(query.statement, query.params, binary=True)
    b = 0.0 if col == bm25.NAME else target.b  # the name field: no length normalisation
    return lambda: _column_weights(cursor.fetchall(), lexemes, docs, target.k1, b)


def units(
    idf: FloatArray, avgdl: FloatArray, tf: FloatArray, dl: FloatArray, k1: float, b: float
) -> IntArray:
    """Each entry's BM25 weight in units of 2^-40, rounded to the nearest (ties to
    even): :data:`riido_pg.ranking.bm25.WEIGHT`, ``(idf * tf / (tf + k1 * (1 - b + b *
    dl / avgdl)) * 2^40)::int8``, with the same float8 operations in the same order
    (each one rounded once, as PostgreSQL's float8 operators round it), so the same
    bits and the same integers (``tests/test_exact_sums.py`` compares the two)."""
    k1_, b_ = np.float64(k1), np.float64(b)
    saturation = tf + k1_ * ((np.float64(1.0) - b_) + (b_ * dl) / avgdl)
    weight = (idf * tf) / saturation * np.float64(bm25.SCALE)
    return np.rint(weight).astype(np.int64)


def _column_weights(
    rows: list[Any], lexemes: Sequence[Sequence[str]], docs: Documents, k1: float, b: float
) -> ColumnWeights:
    """The weights of ``rows`` (``sql/eval_postings.sql``'s: one per postings row of
    the path, in lexeme order) as a documents x terms matrix, and the questions'
    terms as a questions x terms one."""
    import scipy.sparse as sp

    term: dict[str, int] = {}
    for r in rows:
        term.setdefault(str(r[0]), len(term))
    count = len(rows)
    sizes = np.fromiter((len(r[3]) for r in rows), dtype=np.int64, count=count)
    total = int(sizes.sum())
    flat = chain.from_iterable
    ords = np.fromiter(flat(r[3] for r in rows), dtype=np.int64, count=total)
    tf = np.fromiter(flat(r[4] for r in rows), dtype=np.float64, count=total)
    dl = np.fromiter(flat(r[5] for r in rows), dtype=np.float64, count=total)
    idf = np.repeat(np.fromiter((r[1] for r in rows), dtype=np.float64, count=count), sizes)
    avgdl = np.repeat(np.fromiter((r[2] for r in rows), dtype=np.float64, count=count), sizes)
    cols = np.repeat(np.fromiter((term[r[0]] for r in rows), dtype=np.int64, count=count), sizes)
    weights = units(idf, avgdl, tf, dl, k1, b)
    gone = [o for r in rows if r[6] for o in r[6]]
    if gone:  # the removed documents the rows list: left out, as {entries} leaves them
        kept = ~np.isin(ords, np.asarray(gone, dtype=np.int64))
        ords, cols, weights = ords[kept], cols[kept], weights[kept]
    # the rows come in lexeme order, so each term's entries are contiguous
    indptr = np.zeros(len(term) + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=len(term)), out=indptr[1:])
    w = sp.csc_matrix((weights, docs.place(ords), indptr), shape=(docs.count, len(term)))
    q_indptr = [0]
    q_indices: list[int] = []
    for lx in lexemes:
        q_indices.extend(sorted(term[x] for x in set(lx) if x in term))
        q_indptr.append(len(q_indices))
    q = sp.csr_matrix(
        (
            np.ones(len(q_indices), dtype=np.int64),
            np.asarray(q_indices, dtype=np.int32),
            np.asarray(q_indptr),
        ),
        shape=(len(lexemes), len(term)),
    )
    q.has_sorted_indices = True
    return ColumnWeights(q, w.tocsr())


@dataclass(slots=True)
class FirstTargets:
    """One ranking's scores for a batch of questions (a sparse questions x documents
    matrix: only matched documents, scores > 0) and, per question, its first target:
    rank, place and score. Documents not stored score 0."""

    scores: sp.csr_matrix
    n_docs: int
    ranks: IntArray
    best: IntArray
    best_score: FloatArray
    before: BoolArray  # per stored score: does that document rank before the first target?
    #: Every question's stored documents ranked before its first target, in ranking
    #: order, one flat array, and where each question's start (computed on first use).
    _ahead: tuple[IntArray, IntArray] | None = None

    def _row(self, i: int) -> tuple[IntArray, FloatArray, slice]:
        sl = slice(int(self.scores.indptr[i]), int(self.scores.indptr[i + 1]))
        return self.scores.indices[sl], self.scores.data[sl], sl

    def _zeros(self, ords: IntArray, stop: int, count: int | None = None) -> list[int]:
        """Ascending places below ``stop`` that score 0 (not in ``ords``), at most ``count``."""
        if count is not None and count <= 0:
            return []
        free = np.ones(stop, dtype=bool)
        free[ords[ords < stop]] = False
        zeros = np.flatnonzero(free)
        return (zeros if count is None else zeros[:count]).tolist()  # type: ignore[no-any-return]

    def prefix(self, i: int) -> list[int]:
        """The ranking down to (and including) question i's first target."""
        flat, starts = self._ahead_lists()
        ahead: list[int] = flat[starts[i] : starts[i + 1]].tolist()
        if self.best_score[i] == 0:  # the zero-score documents before it, in id order
            ahead += self._zeros(self._row(i)[0], int(self.best[i]))
        ahead.append(int(self.best[i]))
        return ahead

    def prefixes(self, limit: IntArray | None = None) -> tuple[IntArray, IntArray]:
        """Every question's :meth:`prefix` (its first ``limit[i]`` documents when
        given), one flat array, and where each starts."""
        flat, starts = self._ahead_lists()
        m, n_rows = self.scores, len(self.best)
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(starts))
        # the zero-score documents before a zero-score target: every place below it
        # that its row does not store, in place order
        zero = np.flatnonzero(self.best_score == 0)
        free = np.ones((len(zero), self.n_docs), dtype=bool)
        where = np.full(n_rows, -1, dtype=np.int64)
        where[zero] = np.arange(len(zero), dtype=np.int64)
        entry_rows = where[np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(m.indptr))]
        stored = entry_rows >= 0
        free[entry_rows[stored], m.indices[stored]] = False
        free &= np.arange(self.n_docs, dtype=np.int64) < self.best[zero][:, None]
        zero_at, zero_places = np.nonzero(free)
        zero_rows = zero[zero_at]
        n_zero = np.bincount(zero_rows, minlength=n_rows)
        n_ahead = np.diff(starts)
        out_starts = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(n_ahead + n_zero + 1, out=out_starts[1:])
        out = np.empty(int(out_starts[-1]), dtype=np.int64)
        out[out_starts[rows] + np.arange(len(flat), dtype=np.int64) - starts[rows]] = flat
        zero_starts = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(n_zero, out=zero_starts[1:])
        out[
            out_starts[zero_rows]
            + n_ahead[zero_rows]
            + np.arange(len(zero_rows), dtype=np.int64)
            - zero_starts[zero_rows]
        ] = zero_places
        out[out_starts[1:] - 1] = self.best
        if limit is None:
            return out, out_starts
        keep = np.minimum(np.diff(out_starts), limit)
        cut_starts = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(keep, out=cut_starts[1:])
        at = np.repeat(out_starts[:-1] - cut_starts[:-1], keep)
        return out[np.arange(int(cut_starts[-1]), dtype=np.int64) + at], cut_starts

    def _ahead_lists(self) -> tuple[IntArray, IntArray]:
        """The batch's documents ahead of the first targets, sorted once (score
        descending, place ascending, per question)."""
        if self._ahead is None:
            m = self.scores
            picked = np.flatnonzero(self.before)
            rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), np.diff(m.indptr))[picked]
            ords, data = m.indices[picked], m.data[picked]
            starts = np.zeros(m.shape[0] + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=m.shape[0]), out=starts[1:])
            self._ahead = (ords[_row_order(rows, data)].astype(np.int64), starts)
        return self._ahead

    def above_sums(self, values: IntArray) -> IntArray:
        """Per question, the sums of ``values`` (places x measures, integers) over
        the documents ranked above its first target (questions x measures): the
        stored scores :attr:`before` marks, and for a zero-score target the
        zero-score documents with a smaller place (every place below it, less the
        stored ones)."""
        import scipy.sparse as sp

        m = self.scores

        def masked(mask: BoolArray) -> IntArray:
            picked = sp.csr_matrix((mask.astype(np.int64), m.indices, m.indptr), shape=m.shape)
            return picked @ values  # type: ignore[no-any-return]

        total = masked(self.before)
        zero = self.best_score == 0
        if zero.any():
            lower = m.indices < np.repeat(self.best, np.diff(m.indptr))
            below = np.zeros((len(values) + 1, values.shape[1]), dtype=np.int64)
            np.cumsum(values, axis=0, out=below[1:])
            total = total + np.where(zero[:, None], below[self.best] - masked(lower), 0)
        return total

    def order(self, i: int, depth: int) -> list[int]:
        """The first ``depth`` documents of question i's ranking: when fewer than the
        row's matches, only the matches scoring at least the ``depth``-th best score
        (found by a partition, not a sort) are sorted."""
        if depth <= 0:
            return []
        ords, data, _ = self._row(i)
        if depth < len(data):
            cut = len(data) - depth
            keep = data >= np.partition(data, cut)[cut]
            top, scores = ords[keep], data[keep]
            return top[np.lexsort((top, -scores))][:depth].tolist()  # type: ignore[no-any-return]
        ranked: list[int] = ords[np.lexsort((ords, -data))].tolist()
        return ranked + self._zeros(ords, self.n_docs, depth - len(ranked))


def _row_sums(values: IntArray, indptr: IntArray) -> IntArray:
    """Per CSR row, the sum of its entries' ``values``."""
    total = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=total[1:])
    return total[indptr[1:]] - total[indptr[:-1]]


def first_targets(
    scores: sp.csr_matrix, n_docs: int, target_rows: IntArray, target_ords: IntArray
) -> FirstTargets:
    """Score desc, then place asc: a target's rank is 1 + the documents that beat it.

    Works on the stored (non-zero) scores only; the zero-score documents before a
    zero-score target are counted from their places.
    """
    indptr = scores.indptr.astype(np.int64)
    counts = np.diff(indptr)
    t_scores = np.asarray(scores[target_rows, target_ords]).ravel()
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
        return _row_sums(mask.astype(np.int64), indptr)

    # a zero-score target: the zero-score documents with a smaller place are ahead too
    zeros_below = np.where(best_score == 0, best - per_row(lower), 0)
    return FirstTargets(
        scores,
        n_docs,
        per_row(before) + zeros_below + 1,
        best,
        best_score.astype(np.float64),
        before,
    )


@dataclass(slots=True)
class Batch:
    """A batch of questions: each column's scores over every document (``scores``:
    ``raw``, ``ident``, integer units), whatever a combiner derives from them
    (:meth:`derive`), each question's learned hints (``hints``, for the model list)
    and its and the documents' vectors (for the cosine list). FirstTargets are
    computed on first use."""

    scores: dict[str, sp.csr_matrix]
    n_docs: int
    target_rows: IntArray
    target_ords: IntArray
    #: Each question's learned hints, computed on first use by ``hint_source`` (from
    #: the question's row), for the model list.
    hint_source: Callable[[int], list[int] | None] | None = None
    hints: dict[int, list[int] | None] = field(default_factory=dict)
    #: Every document's unit vector under the evaluation's model (row = place), and
    #: each question's (by row; None when it embeds to nothing), for the cosine list.
    vectors: npt.NDArray[np.float32] | None = None
    queries: Sequence[npt.NDArray[np.float32] | None] = ()
    #: Per document place: is it test code (kind ``test``)? documentation or example
    #: code (kind ``example``)? Per question: is it about tests? about documentation
    #: or examples? (None when no policy of the evaluation needs them.)
    test_docs: BoolArray | None = None
    about_tests: BoolArray | None = None
    example_docs: BoolArray | None = None
    about_examples: BoolArray | None = None
    #: Per question, the documents whose qualified name matches it (questions x
    #: places, 0/1; None when no policy of the evaluation needs it).
    qualified: sp.csr_matrix | None = None
    #: Per document place: its raw-column length (None when no policy of the
    #: evaluation needs it).
    lengths: IntArray | None = None
    #: Per document place: did the snapshot's revision change it recently? (None when
    #: no policy of the evaluation needs it.)
    recent_docs: BoolArray | None = None
    #: Per question: the places of the documents the snapshot's window of past commits
    #: weights for it, ascending, and each one's H / max H (None when no policy of the
    #: evaluation needs it or the snapshot has no window).
    history: list[tuple[IntArray, npt.NDArray[np.float64]]] | None = None
    #: The places of the documents the snapshot's window of past commits changed,
    #: ascending, and each one's C / max C (the change-history prior; None when no
    #: policy of the evaluation needs it or the snapshot has no window).
    change: tuple[IntArray, npt.NDArray[np.float64]] | None = None
    derived: dict[str, sp.csr_matrix] = field(default_factory=dict)
    #: Per document place: its characters and estimated tokens (inspection costs;
    #: None when not given, then every cost is 0).
    chars: IntArray | None = None
    tokens: IntArray | None = None
    _firsts: dict[str, FirstTargets] = field(default_factory=dict)
    _above: dict[str, IntArray] = field(default_factory=dict)
    _cost_table: IntArray | None = None
    _pairs: dict[tuple[str, str], tuple[Pair, list[tuple[IntArray, IntArray]]]] = field(
        default_factory=dict
    )
    _interleaved: dict[tuple[str, str], tuple[list[int], list[tuple[int, int]]]] = field(
        default_factory=dict
    )

    def derive(self, key: str, matrix: sp.csr_matrix) -> None:
        self.derived[key] = matrix

    def firsts(self, key: str) -> FirstTargets:
        if key not in self._firsts:
            matrix = self.scores[key] if key in self.scores else self.derived[key]
            self._firsts[key] = first_targets(
                matrix, self.n_docs, self.target_rows, self.target_ords
            )
        return self._firsts[key]

    def rank_of_first(self, key: str, i: int) -> int:
        return int(self.firsts(key).ranks[i])

    def hint_list(self, i: int) -> list[int]:
        """Question i's learned hints (empty when it has none)."""
        if i not in self.hints:
            self.hints[i] = self.hint_source(i) if self.hint_source is not None else None
        return self.hints[i] or []

    def prefix(self, name: str, i: int) -> list[int]:
        """A list's ranking down to question i's first target (the model's hint list
        as a whole: it is partial)."""
        if name == MODEL:
            return self.hint_list(i)
        return self.firsts(name).prefix(i)

    def score_of(self, key: str, i: int, places: Sequence[int]) -> FloatArray:
        """Question i's scores by ``key`` of these places (0 where none is stored)."""
        m = self.scores[key] if key in self.scores else self.derived[key]
        lo, hi = int(m.indptr[i]), int(m.indptr[i + 1])
        row = dict(zip(m.indices[lo:hi].tolist(), m.data[lo:hi].tolist(), strict=True))
        return np.asarray([row.get(int(p), 0.0) for p in places], dtype=np.float64)

    def embedded(
        self, i: int, places: Sequence[int]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
        """Question i's unit vector and the vectors of these places, in that order."""
        query = self.queries[i] if i < len(self.queries) else None
        if query is None or self.vectors is None:
            return None
        return query, self.vectors[np.asarray(places, dtype=np.int64)]

    def cost_above(self, key: str, i: int) -> tuple[int, int]:
        """Characters and tokens above question i's first target by ``key``,
        computed for the whole batch on first use."""
        if key not in self._above:
            self._above[key] = self.firsts(key).above_sums(self._costs())
        chars, tokens = self._above[key][i].tolist()
        return chars, tokens

    def cost_of(self, places: Sequence[int]) -> tuple[int, int]:
        chars, tokens = self._costs()[np.asarray(places, dtype=np.int64)].sum(axis=0).tolist()
        return chars, tokens

    def interleaved(self, first: str, second: str, i: int) -> tuple[int, tuple[int, int]]:
        """Question i's first target's rank in the interleave of two columns'
        rankings (``first`` leading) and the characters and tokens above it, every
        question of the batch walked on first use (:mod:`riido_pg.evaluation.walks`)."""
        key = (first, second)
        if key not in self._interleaved:
            self._interleaved[key] = self._walk(first, second)
        ranks, costs = self._interleaved[key]
        rank = ranks[i]
        if rank == 0:
            raise ValueError("no target in the ranking")
        return rank, costs[i]

    def _walk(self, first: str, second: str) -> tuple[list[int], list[tuple[int, int]]]:
        names = (first, second) if first <= second else (second, first)
        if names not in self._pairs:
            # Each prefix ends with its list's first target, and the walk stops when
            # either list places its own: the first list then has had at most one
            # turn more than the second has had entries, and skipped only what the
            # second placed, so it reads at most 2 x (the second's length) entries
            # (and the other way round). Longer prefixes (a zero-score target's run
            # of zero-score documents) are cut there; at most one of the two is.
            lengths = [self.firsts(name).ranks for name in names]
            lists = [
                self.firsts(name).prefixes(2 * other)
                for name, other in zip(names, lengths[::-1], strict=True)
            ]
            (a, a_starts), (b, b_starts) = lists
            pair = Pair(a, a_starts, b, b_starts, self.target_rows, self.target_ords, self.n_docs)
            self._pairs[names] = (pair, lists)
        pair, lists = self._pairs[names]
        walks = pair.walk(first_leads=first == names[0])
        table = self._costs()
        n_rows = len(lists[0][1]) - 1
        costs = np.zeros((n_rows, 2), dtype=np.int64)
        for (places, starts), above in zip(
            lists, (walks.first_above, walks.second_above), strict=True
        ):
            picked = np.flatnonzero(above)
            total = np.zeros((len(picked) + 1, 2), dtype=np.int64)
            np.cumsum(table[places[picked]], axis=0, out=total[1:])
            ends = np.searchsorted(picked, starts)  # each row's picked entries, as a range
            costs += total[ends[1:]] - total[ends[:-1]]
        return walks.ranks.tolist(), [(c, t) for c, t in costs.tolist()]

    def _costs(self) -> IntArray:
        """Places x (characters, tokens)."""
        if self._cost_table is None:
            zero = np.zeros(self.n_docs, dtype=np.int64)
            chars = self.chars if self.chars is not None else zero
            tokens = self.tokens if self.tokens is not None else zero
            self._cost_table = np.column_stack([chars, tokens]).astype(np.int64)
        return self._cost_table

    def order(self, name: str, i: int, depth: int) -> list[int]:
        if name == MODEL:
            return self.hint_list(i)[:depth]
        return self.firsts(name).order(i, depth)

    def reciprocal_ranks(self, col: str, k: float) -> sp.csr_matrix:
        """1 / (k + rank) of every document a column matches, its rank among them
        (score descending, id ascending), per question."""
        import scipy.sparse as sp

        m = self.scores[col].tocsr()
        m.sort_indices()
        counts = np.diff(m.indptr)
        rows = np.repeat(np.arange(m.shape[0], dtype=np.int64), counts)
        order = _row_order(rows, m.data)
        # the order keeps each row's entries in the row's own positions, so the
        # entry at position p of the order ranks p - (its row's start) + 1
        starts = np.repeat(m.indptr[:-1].astype(np.int64), counts)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64) - starts + 1
        data = 1.0 / (float(k) + rank.astype(np.float64))
        return sp.csr_matrix((data, m.indices.copy(), m.indptr.copy()), shape=m.shape)


def _row_order(rows: IntArray, units: npt.NDArray[np.int64] | FloatArray) -> IntArray:
    """The entries of a CSR matrix (rows ascending, places ascending within a row; or
    any subset of them, in that order) in each row's ranking order: scores
    descending, then place ascending.

    For integer units, one stable sort of one int64 key, row * (top + 1) + (top -
    units), where it fits in 63 bits (ties keep their place order: the entries are
    already in it); three sort keys otherwise."""
    if len(units) == 0:
        return np.zeros(0, dtype=np.int64)
    exact = np.issubdtype(units.dtype, np.integer)
    low, top = (int(units.min()), int(units.max())) if exact else (-1, 0)
    span = top + 1
    if exact and low >= 0 and int(rows[-1]) * span + span < 2**63:
        key = rows * np.int64(span) + (np.int64(top) - units.astype(np.int64))
        return np.argsort(key, kind="stable")
    places = np.arange(len(units), dtype=np.int64)  # their place order, already sorted
    return np.lexsort((places, -units, rows))


def history_places(
    question: Sequence[str], subjects: Sequence[Sequence[str]], changed: Sequence[Sequence[int]]
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """A question's history weights (:func:`riido_pg.extract.similar.history_weights`
    of its identifier lexemes) as the places they weight, ascending, and H / max H."""
    from riido_pg.extract.similar import history_weights

    weights = history_weights(question, subjects, changed)
    places = np.array(sorted(weights), dtype=np.int64)
    return places, np.array([weights[p] for p in places.tolist()], dtype=np.float64)


def change_places(changed: Sequence[Sequence[int]]) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """The change-history weights (:func:`riido_pg.extract.similar.change_weights`) of a
    snapshot's window as the places they weight, ascending, and C / max C."""
    from riido_pg.extract.similar import change_weights

    weights = change_weights(changed)
    places = np.array(sorted(weights), dtype=np.int64)
    return places, np.array([weights[p] for p in places.tolist()], dtype=np.float64)
