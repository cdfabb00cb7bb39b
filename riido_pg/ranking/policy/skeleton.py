"""The shared ranking skeleton every policy module plugs into.

A policy module (``single``, ``interleaved``, ``fused``, ``rrf``, ``structure``,
``hinted``, ``model_weighted``: README "Policies", docs/how-it-works.md "How to add a
policy") declares
its parameters as plain data (:class:`Param`, the way ir_measures' measures carry
theirs) and a combiner that turns its ranked lists into one ranking, for a stored
snapshot (:meth:`Combiner.rank`, a plan of SQL statements) and inside the evaluation
(:meth:`Combiner.first_target`, :meth:`Combiner.run_order`), so both paths rank alike
by construction. A policy that ranks by a score of its own subclasses
:class:`Scored`: it gives ONE score fragment (:class:`Fragment`, an SQL expression over
its columns' BM25 scores) to the one ranking statement, ``sql/rank_score.sql``
(:func:`riido_pg.ranking.bm25.score_ranking`), and the same score over the
evaluation's sparse matrices (:meth:`Scored.scores`).

The evaluation depends on the protocols declared here (:class:`Combiner`,
:class:`EvalScores`), never on a concrete combiner; :class:`EvalScores` is what the
evaluation's batch of questions offers a combiner
(``riido_pg.evaluation.scoring.Batch`` implements it).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from psycopg import sql

from riido_pg.errors import ConflictingOptions
from riido_pg.ranking import bm25
from riido_pg.ranking.inputs import COLUMNS, COSINE, HINTS, IDENT, MODEL, NAME, RAW
from riido_pg.ranking.terms import QueryTerms
from riido_pg.server.plans import Plan
from riido_pg.storage.snapshots import Target

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import scipy.sparse as sp

__all__ = [
    "AT_LEAST_ONE",
    "AT_LEAST_ZERO",
    "COLUMNS",
    "COSINE",
    "HINTS",
    "IDENT",
    "MODEL",
    "NAME",
    "RAW",
    "UNIT_INTERVAL",
    "Check",
    "Combiner",
    "Embedded",
    "EvalScores",
    "Fragment",
    "Param",
    "Policy",
    "RankInput",
    "Row",
    "Scored",
    "column_rows",
    "param",
    "rank",
    "units",
    "value",
]


# -- parameters ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """What a parameter's value must be: a test and the words saying it."""

    test: Callable[[float], bool]
    text: str


AT_LEAST_ZERO = Check(lambda v: v >= 0 and math.isfinite(v), "a finite number >= 0")
AT_LEAST_ONE = Check(lambda v: v >= 1 and math.isfinite(v), "a finite number >= 1")
UNIT_INTERVAL = Check(lambda v: 0 < v <= 1, "a number in (0, 1]")


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a policy: its name (the key of ``params=``), its default,
    what a value must be and what it is (``doc``, for messages and ``--help``).
    ``config``: the key the evaluation's ``config`` reports it under (None: not
    reported)."""

    name: str
    default: float
    check: Check
    doc: str
    config: str | None = None

    def checked(self, value: float) -> float:
        """``value`` as a float, or ConflictingOptions saying what it must be."""
        if not self.check.test(value):
            raise ConflictingOptions(f"{self.doc} must be {self.check.text}, not {value}")
        return float(value)


# -- what a combiner ranks and returns ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Embedded:
    """A query embedded by a learned model: the model's name, its dimension and the
    query's unit vector (float32), for a policy drawing on the model's cosine."""

    model: str
    dim: int
    query: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class RankInput:
    """What a combiner ranks: a snapshot, the query's terms, the first ``limit``
    (None: every document), the hint lists a policy may draw on (doc_ords), and the
    query embedded by a learned model (``embedded``, for the ``cosine`` list)."""

    target: Target
    terms: QueryTerms
    limit: int | None
    hints: Sequence[int] | None = None
    model: Sequence[int] | None = None
    embedded: Embedded | None = None


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
    #: The learned score it was placed by, when a policy reorders by one
    #: (``model_structure_weighted``'s first M: ``weighted_score``).
    learned: float | None = None


class EvalScores(Protocol):
    """What the evaluation offers a combiner for a batch of questions: each column's
    scores over every document (``scores``: integer units, questions x documents),
    per document whether it is test or example code and per question whether it is
    about those (None when no policy of the evaluation reads the fields), and the
    ranking operations over a score matrix, by key (a column, or a key a combiner
    :meth:`derive`\\ d)."""

    @property
    def scores(self) -> Mapping[str, sp.csr_matrix]: ...
    @property
    def test_docs(self) -> npt.NDArray[np.bool_] | None: ...
    @property
    def about_tests(self) -> npt.NDArray[np.bool_] | None: ...
    @property
    def example_docs(self) -> npt.NDArray[np.bool_] | None: ...
    @property
    def about_examples(self) -> npt.NDArray[np.bool_] | None: ...
    @property
    def lengths(self) -> npt.NDArray[np.int64] | None:
        """Per document place, its length in the raw column (``riido.texts.len_raw``;
        None when no policy reads the fields)."""

    @property
    def recent_docs(self) -> npt.NDArray[np.bool_] | None:
        """Per document place, whether the snapshot's revision changed it recently
        (``riido.snapshots.recent``; None when no policy reads the fields)."""

    @property
    def history(self) -> Sequence[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] | None:
        """Per question, the documents (places, ascending) the snapshot's window of past
        commits weights for it and their H / max H (None when no policy reads the
        fields or the snapshot has no window)."""

    @property
    def change(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
        """The documents (places, ascending) the snapshot's window of past commits
        changed and their C / max C, the change-history prior's weights (None when no
        policy reads the fields or the snapshot has no window)."""

    @property
    def qualified(self) -> sp.csr_matrix | None:
        """Per question, the documents whose qualified name's lexemes it holds, every
        one (questions x documents, 1 where so; None when no policy reads fields)."""

    def derive(self, key: str, matrix: sp.csr_matrix) -> None:
        """Keep ``matrix`` (questions x documents, scores > 0) under ``key``."""

    def rank_of_first(self, key: str, i: int) -> int:
        """The rank of question ``i``'s first target in the ranking by ``key``."""

    def prefix(self, name: str, i: int) -> list[int]:
        """A list's ranking down to question ``i``'s first target."""

    def order(self, name: str, i: int, depth: int) -> list[int]:
        """The first ``depth`` documents of a list's ranking for question ``i``."""

    def reciprocal_ranks(self, col: str, k: float) -> sp.csr_matrix:
        """1 / (k + rank) of every document a column matches, per question."""

    def cost_above(self, key: str, i: int) -> tuple[int, int]:
        """What a reader reads above question ``i``'s first target in the ranking by
        ``key``: the characters and estimated tokens of those documents."""

    def cost_of(self, places: Sequence[int]) -> tuple[int, int]:
        """The characters and estimated tokens of these documents."""

    def interleaved(self, first: str, second: str, i: int) -> tuple[int, tuple[int, int]]:
        """Question ``i``'s first target's rank in the interleave of two columns'
        rankings, ``first`` leading (``interleave_until`` of their prefixes), and the
        characters and estimated tokens of the documents above it."""

    def score_of(self, key: str, i: int, places: Sequence[int]) -> npt.NDArray[np.float64]:
        """Question ``i``'s scores by ``key`` (a key a combiner derived) of these
        documents, 0 where it has none."""

    def embedded(
        self, i: int, places: Sequence[int]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
        """Question ``i``'s unit vector under the evaluation's model and the stored
        vectors of these documents (rows in that order), or None when the question
        embeds to nothing (or no model was named)."""


class Combiner(Protocol):
    """How a policy turns its ranked lists into one ranking, on both paths."""

    @property
    def lists(self) -> tuple[str, ...]:
        """The lists it draws on (one to four of raw, ident, name, hints, model,
        cosine)."""

    @property
    def score_name(self) -> str | None:
        """The candidate key of the score it ranks by, when it has one of its own."""

    @property
    def params(self) -> tuple[Param, ...]:
        """Its parameters, declared."""

    @property
    def values(self) -> Mapping[str, float]:
        """Each parameter's value in this combiner."""

    def configured(self, given: Mapping[str, float]) -> Self:
        """This combiner with some parameters given other values (checked)."""

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        """The ranking of a stored snapshot, or its first ``given.limit``."""

    def derive(self, batch: EvalScores) -> None:
        """Inside the evaluation, once per batch: compute what it ranks by."""

    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int:
        """Inside the evaluation: the rank of question ``i``'s first target."""

    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]:
        """Inside the evaluation: the first ``depth`` documents of question ``i``."""

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        """Inside the evaluation: the rank of question ``i``'s first target and the
        cost (characters, estimated tokens) of the documents ranked above it."""


class Base(ABC):
    """What every combiner shares: its declared parameters' values, checked."""

    lists: tuple[str, ...] = ()
    score_name: str | None = None
    params: tuple[Param, ...] = ()

    def __init__(self, **values: float) -> None:
        declared = {p.name: p for p in self.params}
        unknown = set(values) - set(declared)
        if unknown:
            raise ValueError(f"no parameter {sorted(unknown)[0]!r}")
        self._values = {p.name: p.checked(values.get(p.name, p.default)) for p in declared.values()}

    @property
    def values(self) -> Mapping[str, float]:
        return dict(self._values)

    def configured(self, given: Mapping[str, float]) -> Self:
        declared = {p.name: p for p in self.params}
        for name in given:
            if name not in declared:
                raise ConflictingOptions(f"no parameter {name!r} in this policy")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._values = {**self._values, **{k: declared[k].checked(v) for k, v in given.items()}}
        return new

    def __getitem__(self, name: str) -> float:
        return self._values[name]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({args})"

    def derive(self, batch: EvalScores) -> None:  # noqa: B027 - most combiners derive nothing
        pass

    @abstractmethod
    def rank(self, given: RankInput) -> Plan[list[Row]]: ...

    @abstractmethod
    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int: ...

    @abstractmethod
    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]: ...

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        rank = self.first_target(batch, i, targets)
        return rank, batch.cost_of(self.run_order(batch, i, rank - 1))


def column_rows(given: RankInput, col: str) -> Plan[list[Row]]:
    """One column's BM25 ranking (``sql/rank.sql``) as rows."""
    result = yield bm25.ranked(given.target, col, given.terms.of(col), given.limit)
    return [Row(int(o), str(i), **{col: int(u)}) for o, i, u in result.rows]


# -- the score fragment -------------------------------------------------------------


def units(col: str) -> sql.Composable:
    """A column's score units of the document (0 when the column does not match it)."""
    return sql.SQL("coalesce({}.units, 0)").format(sql.Identifier(f"c_{col}"))


def value(col: str) -> sql.Composable:
    """A column's BM25 score of the document, a float8 (0 when unmatched)."""
    return sql.SQL("({}::float8 / {})").format(units(col), bm25.SCALE_SQL)


def rank(col: str) -> sql.Composable:
    """The document's rank in a column's ranking (NULL when unmatched; the fragment
    must be ``ranked``)."""
    return sql.SQL("{}.r").format(sql.Identifier(f"c_{col}"))


def param(name: str) -> sql.Composable:
    """A policy parameter's value, bound as a float8."""
    return sql.SQL("{}::float8").format(sql.Placeholder(f"p_{name}"))


@dataclass(frozen=True, slots=True)
class Fragment:
    """A policy's part of ``sql/rank_score.sql``: the ``score`` expression of a
    document over its ``columns`` (:func:`value`, :func:`units`, :func:`rank`,
    :func:`param`; the body columns and the name field, each ``sql/scored.sql``;
    ``ranked``: the columns' matches numbered in ranking order, for :func:`rank`),
    any CTEs it reads (``ctes``, each ``name AS (...)``) and those left-joined on the
    document's doc_ord (``joins``: (CTE, alias) pairs). A score in two steps gives
    ``final`` too: an expression over CTE ``fused``'s row ``f`` (its ``score``, its
    columns' units) and the ``post`` CTEs (read after ``fused``; those of
    ``post_joins`` left-joined on ``f.doc_ord``), so a step can look at the first
    step's scores of every document (structure_bm25's name match reads the k-th
    best)."""

    columns: tuple[str, ...]
    score: sql.Composable
    ranked: bool = False
    ctes: tuple[sql.Composable, ...] = ()
    joins: tuple[tuple[str, str], ...] = ()
    final: sql.Composable | None = None
    post: tuple[sql.Composable, ...] = ()
    post_joins: tuple[tuple[str, str], ...] = ()


class Scored(Base):
    """A policy that ranks by a score of its own: one fragment for the SQL ranking,
    the same score over the evaluation's sparse matrices. A document whose score is
    not above 0 ranks with the unmatched ones (score 0, in id order)."""

    @abstractmethod
    def fragment(self, terms: QueryTerms) -> Fragment:
        """The score in SQL, for this query (its parameters bound from
        :meth:`bound`)."""

    @abstractmethod
    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        """The same score for a batch of questions (questions x documents, zeros not
        stored), computed in the same float8 operations, in the same order."""

    def bound(self, terms: QueryTerms) -> dict[str, float]:
        """The values :func:`param` placeholders are bound to (default: the
        parameters' values)."""
        return dict(self._values)

    def rank(self, given: RankInput) -> Plan[list[Row]]:
        t = given.terms
        part = self.fragment(t)
        result = yield bm25.score_ranking(
            given.target,
            {c: t.of(c) for c in part.columns},
            given.limit,
            score=part.score,
            ranked=part.ranked,
            ctes=part.ctes,
            joins=part.joins,
            final=part.final,
            post=part.post,
            post_joins=part.post_joins,
            params={f"p_{k}": v for k, v in self.bound(t).items()},
        )
        rows = []
        for o, i, s, *column_units in result.rows:
            row = Row(int(o), str(i), score=float(s))
            for col, u in zip(part.columns, column_units, strict=True):
                setattr(row, col, int(u))
            rows.append(row)
        return rows

    @property
    def key(self) -> str:
        """The batch's name of this score: one per combiner and parameter values, so
        several evaluated in one batch each rank by their own. Kept with the values
        it was made from (read twice per question in an evaluation; a configured copy
        has values of its own, so makes its own)."""
        made = self.__dict__.get("_key")
        if made is None or made[0] is not self._values:
            made = (self._values, f"{type(self).__name__} {self.score_name} {self._values!r}")
            self.__dict__["_key"] = made
        key: str = made[1]
        return key

    def derive(self, batch: EvalScores) -> None:
        batch.derive(self.key, self.scores(batch))

    def first_target(self, batch: EvalScores, i: int, targets: set[int]) -> int:
        return batch.rank_of_first(self.key, i)

    def run_order(self, batch: EvalScores, i: int, depth: int) -> list[int]:
        return batch.order(self.key, i, depth)

    def first_target_cost(
        self, batch: EvalScores, i: int, targets: set[int]
    ) -> tuple[int, tuple[int, int]]:
        return batch.rank_of_first(self.key, i), batch.cost_above(self.key, i)


# -- the policy ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    #: How its lists become one ranking.
    combiner: Combiner
    #: One line for ``--help`` and the README.
    summary: str
    #: The command-line flag that selects this policy on its own, if any. A flag
    #: excludes every other flag and any ``--policy`` naming another policy.
    flag: str | None = None
    #: A learned policy: the ``--model-ranking`` value that selects it with
    #: ``--model`` (None: not selectable that way), and the policy that ranks a query
    #: the model embeds to nothing (its result labelled
    #: ``<fallback>_model_input_out_of_scope``).
    model_ranking: str | None = None
    model_fallback: str = "bm25"

    @property
    def lists(self) -> tuple[str, ...]:
        return self.combiner.lists

    @property
    def params(self) -> tuple[Param, ...]:
        return self.combiner.params

    @property
    def needs_hints(self) -> bool:
        """The caller supplies the hint list (``--hints-file``, ``hints=``)."""
        return HINTS in self.lists

    @property
    def needs_model(self) -> bool:
        """The caller names a learned hint source (``--model``, ``model=``): the
        policy draws on the model's hint order or its cosine."""
        return MODEL in self.lists or COSINE in self.lists

    @property
    def fallback_label(self) -> str:
        """The label of a result whose query the model embeds to nothing."""
        return f"{self.model_fallback}_model_input_out_of_scope"

    @property
    def identifier(self) -> bool:
        """Draws on the identifier column: falls back to ``bm25`` (labelled
        ``OUT_OF_SCOPE``) for a query outside the identifier limits."""
        return IDENT in self.lists

    @property
    def evaluated(self) -> bool:
        """``eval`` can run it: it needs nothing per question beyond the question
        (a model policy runs when ``eval --model`` names the model)."""
        return not self.needs_hints

    @property
    def fused(self) -> bool:
        """It ranks by a score of its own (a fusion of the columns)."""
        return self.combiner.score_name is not None

    def describe(self) -> dict[str, Any]:
        """Its parameters' values."""
        return dict(self.combiner.values)
