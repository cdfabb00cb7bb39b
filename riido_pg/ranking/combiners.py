"""How a policy turns its ranked lists into one ranking: each combiner owns that,
for a stored snapshot (:meth:`Combiner.rank`, a plan of SQL statements) and inside
the evaluation (:meth:`Combiner.first_target` and :meth:`Combiner.run_order`, over
the evaluation's sparse scores), so both paths rank alike by construction.

The lists are ``raw`` (BM25 over ``tsv_raw``), ``ident`` (BM25 over ``tsv_ident``),
``hints`` (the caller's hint ids, in order) and ``model`` (a learned hint source's
order). A combiner that ranks by a score of its own (a fusion) names it
(:attr:`Combiner.score_name`); candidates carry it beside ``bm25_score``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from riido_pg.ranking import bm25
from riido_pg.ranking.inputs import COLUMNS, HINTS, IDENT, MODEL, NAME, RAW
from riido_pg.ranking.interleave import iter_interleave
from riido_pg.ranking.terms import QueryTerms
from riido_pg.server.plans import Plan
from riido_pg.storage.snapshots import Target

if TYPE_CHECKING:
    from riido_pg.evaluation.scoring import Batch

__all__ = [
    "COLUMNS",
    "HINTS",
    "IDENT",
    "MODEL",
    "NAME",
    "RAW",
    "Combiner",
    "Fused",
    "Interleave",
    "RankInput",
    "ReciprocalRank",
    "Row",
    "Single",
    "Structure",
]


@dataclass(frozen=True, slots=True)
class RankInput:
    """What a combiner ranks: a snapshot, the query's terms, the first ``limit``
    (None: every document), and the hint lists a policy may draw on (doc_ords)."""

    target: Target
    terms: QueryTerms
    limit: int | None
    hints: Sequence[int] | None = None
    model: Sequence[int] | None = None
    #: The fused weight a caller gave (None: the combiner's own).
    weight: float | None = None


@dataclass(slots=True)
class Row:
    """One ranked document as a combiner knows it: its ord, and whatever it read on
    the way (its id, its columns' score units, its own score)."""

    doc_ord: int
    doc_id: str | None = None
    raw: int | None = None
    ident: int | None = None
    score: float | None = None
    name: int | None = None


class Combiner(ABC):
    """Turns ranked lists into one ranking."""

    #: The lists it draws on.
    lists: tuple[str, ...]
    #: The candidate key of the score it ranks by, when it has one of its own.
    score_name: str | None = None

    @abstractmethod
    def rank(self, given: RankInput) -> Plan[list[Row]]:
        """The ranking of a stored snapshot, or its first ``given.limit``."""

    def derive(self, batch: Batch) -> None:  # noqa: B027 - most combiners derive nothing
        """Inside the evaluation: compute, once per batch of questions, whatever
        scores this combiner ranks by (``batch.derived``)."""

    @abstractmethod
    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        """Inside the evaluation: the rank of question ``i``'s first target."""

    @abstractmethod
    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        """Inside the evaluation: the first ``depth`` documents of question ``i``."""

    def describe(self) -> dict[str, Any]:
        """Its parameters, for a policy's description."""
        return {}


def _column(given: RankInput, col: str) -> Plan[list[Row]]:
    result = yield bm25.ranked(given.target, col, given.terms.of(col), given.limit)
    return [Row(int(o), str(i), **{col: int(u)}) for o, i, u in result.rows]


class Single(Combiner):
    """One list's ranking as it is."""

    def __init__(self, column: str) -> None:
        if column not in COLUMNS:
            raise ValueError(f"a single list is a column ({', '.join(COLUMNS)}), not {column!r}")
        self.lists = (column,)

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        return (yield from _column(given, self.lists[0]))

    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self.lists[0], i)

    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        return batch.order(self.lists[0], i, depth)


class Interleave(Combiner):
    """Alternate two lists, the first one's document first, skipping documents
    already placed (README "Ranking"): baseline-first when the first is ``raw``."""

    def __init__(self, first: str, second: str) -> None:
        self.lists = (first, second)

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        found: dict[int, Row] = {}
        orders: list[Sequence[int]] = []
        for name in self.lists:
            if name in COLUMNS:
                rows = yield from _column(given, name)
                for row in rows:
                    known = found.setdefault(row.doc_ord, row)
                    if known is not row:
                        known.raw = known.raw if known.raw is not None else row.raw
                        known.ident = known.ident if known.ident is not None else row.ident
                orders.append([r.doc_ord for r in rows])
            else:
                orders.append(list((given.hints if name == HINTS else given.model) or ()))
        merged = iter_interleave(orders[0], orders[1])
        ords = list(merged if given.limit is None else islice(merged, given.limit))
        return [found.get(o) or Row(o) for o in ords]

    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        from riido_pg.evaluation.metrics import first_target_rank

        first, second = (batch.prefix(name, i) for name in self.lists)
        return first_target_rank(iter_interleave(first, second), targets)

    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        first, second = (batch.order(name, i, depth) for name in self.lists)
        return list(islice(iter_interleave(first, second), depth))


class Fused(Combiner):
    """One ranking by ``bm25 + w * identifier_bm25`` (``sql/rank_fused.sql``); a
    document whose fused score is 0 ranks with the unmatched ones."""

    lists = (RAW, IDENT)
    score_name = "fused_score"

    def __init__(self, weight: float) -> None:
        self.weight = weight

    def describe(self) -> dict[str, Any]:
        return {"weight": self.weight}

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        weight = self.weight if given.weight is None else given.weight
        t = given.terms
        result = yield bm25.two_columns(
            given.target, "rank_fused", t.raw, t.ident, given.limit, w=weight
        )
        return [Row(int(o), str(i), int(r), int(d), float(s)) for o, i, s, r, d in result.rows]

    def _weight(self, batch: Batch) -> float:
        return self.weight if batch.weight is None else batch.weight

    def _key(self, batch: Batch) -> str:
        """The batch's name of this fusion's scores: one per weight, so fusions of
        several weights evaluated in one batch each rank by their own."""
        return f"{self.score_name} w={self._weight(batch)!r}"

    def derive(self, batch: Batch) -> None:
        raw, ident = (batch.scores[c] / bm25.SCALE for c in COLUMNS)
        fused = (raw + self._weight(batch) * ident).tocsr()
        fused.eliminate_zeros()  # a zero fused score ranks with the unmatched documents
        batch.derive(self._key(batch), fused)

    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self._key(batch), i)

    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        return batch.order(self._key(batch), i, depth)


class ReciprocalRank(Combiner):
    """Reciprocal rank fusion of the two columns (``sql/rank_rrf.sql``): a document
    scores 1 / (k + its rank) in each column that matches it, summed; documents
    neither column matches follow with score 0, in id order."""

    lists = (RAW, IDENT)
    score_name = "rrf_score"

    def __init__(self, k: float) -> None:
        self.k = k

    def describe(self) -> dict[str, Any]:
        return {"k": self.k}

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        t = given.terms
        result = yield bm25.two_columns(
            given.target, "rank_rrf", t.raw, t.ident, given.limit, k=self.k
        )
        return [Row(int(o), str(i), int(r), int(d), float(s)) for o, i, s, r, d in result.rows]

    @property
    def _key(self) -> str:
        """The batch's name of this fusion's scores: one per k."""
        return f"{self.score_name} k={self.k!r}"

    def derive(self, batch: Batch) -> None:
        raw, ident = (batch.reciprocal_ranks(c, self.k) for c in COLUMNS)
        batch.derive(self._key, (raw + ident).tocsr())

    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self._key, i)

    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        return batch.order(self._key, i, depth)


class Structure(Combiner):
    """One ranking by ``(bm25 + w_ident * identifier_bm25 + w_name * name_bm25) *
    match * prior`` (``sql/rank_structure.sql``): the name field is BM25 with b = 0 of
    the identifier-split query against each document's name (:mod:`riido_pg.fields`);
    ``match`` is ``name_match`` for a document whose qualified name has lexemes, every
    one of them among the query's identifier lexemes (``Context.invoke`` for "invoke
    the context"), else 1; the prior is the least of ``test_prior`` for a test
    document unless the question is about tests, ``example_prior`` for documentation,
    example or benchmark code unless the question is about those, and 1. A document
    whose score is 0 ranks with the unmatched ones."""

    lists = (RAW, IDENT, NAME)
    score_name = "structure_score"

    def __init__(
        self,
        w_ident: float,
        w_name: float,
        test_prior: float,
        example_prior: float = 1.0,
        name_match: float = 1.0,
    ) -> None:
        if not (0 < test_prior <= 1 and 0 < example_prior <= 1):
            raise ValueError("the test and example priors must be in (0, 1]")
        if not name_match >= 1:
            raise ValueError("the name match factor must be at least 1")
        self.w_ident = w_ident
        self.w_name = w_name
        self.test_prior = test_prior
        self.example_prior = example_prior
        self.name_match = name_match

    def describe(self) -> dict[str, Any]:
        return {
            "w_ident": self.w_ident,
            "w_name": self.w_name,
            "name_match": self.name_match,
            "test_prior": self.test_prior,
            "example_prior": self.example_prior,
        }

    def priors(self, terms: QueryTerms) -> tuple[float, float]:
        """The factors of a test and of an example document's score for these query
        terms (1 for a kind the question is about)."""
        return (
            1.0 if terms.about_tests else self.test_prior,
            1.0 if terms.about_examples else self.example_prior,
        )

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        t = given.terms
        test_prior, example_prior = self.priors(t)
        result = yield bm25.structure(
            given.target,
            t.raw,
            t.ident,
            given.limit,
            w_ident=self.w_ident,
            w_name=self.w_name,
            name_match=self.name_match,
            test_prior=test_prior,
            example_prior=example_prior,
        )
        return [
            Row(int(o), str(i), int(r), int(d), float(s), int(n))
            for o, i, s, r, d, n in result.rows
        ]

    @property
    def _key(self) -> str:
        return (
            f"{self.score_name} {self.w_ident!r} {self.w_name!r} {self.test_prior!r} "
            f"{self.example_prior!r} {self.name_match!r}"
        )

    def derive(self, batch: Batch) -> None:
        import numpy as np

        raw, ident, name = (batch.scores[c] / bm25.SCALE for c in self.lists)
        summed = (raw + self.w_ident * ident + self.w_name * name).tocsr()
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        if batch.qualified is not None and self.name_match != 1:
            matched = batch.qualified.tocoo()
            width = np.int64(summed.shape[1])
            keys = matched.row.astype(np.int64) * width + matched.col.astype(np.int64)
            here = np.isin(rows.astype(np.int64) * width + summed.indices, keys)
            summed.data = summed.data * np.where(here, self.name_match, 1.0)  # x * 1.0 is x
        prior = np.ones(summed.nnz)
        kinds = (
            (batch.test_docs, batch.about_tests, self.test_prior),
            (batch.example_docs, batch.about_examples, self.example_prior),
        )
        for docs, about, factor in kinds:
            if docs is not None and about is not None:
                demote = docs[summed.indices] & ~about[rows]
                prior = np.where(demote, np.minimum(prior, factor), prior)
        summed.data = summed.data * prior  # the SQL's one product (x * 1.0 is x)
        summed.eliminate_zeros()  # a zero score ranks with the unmatched documents
        batch.derive(self._key, summed)

    def first_target(self, batch: Batch, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self._key, i)

    def run_order(self, batch: Batch, i: int, depth: int) -> list[int]:
        return batch.order(self._key, i, depth)
