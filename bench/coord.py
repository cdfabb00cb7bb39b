"""Non-learned signals that could separate a target from its siblings, evaluated
offline beside the shipped ``structure_bm25`` (docs/evaluation.md "Tried and dropped:
a coordination factor").

Each variant is ``structure_bm25`` as shipped, its score then multiplied by one more
factor, registered as a policy and evaluated with the shipped ``Database.evaluate`` in
the same run as the shipped policy and the control. The factor is computed from the
evaluation's own per-column term weights (:mod:`riido_pg.evaluation.scoring`: the
script records which lexeme each column of the weights is), so nothing is ranked in
SQL and no stored form changes:

- ``coord``: the coordination factor ``(m / n) ^ p``, ``m`` the distinct question
  lexemes the document holds in any of the columns ``cols`` (``raw``, ``ident``,
  ``name``: one lexeme counted once, whatever columns hold it), ``n`` the question's
  distinct lexemes in those columns (a constant per question: only ``m`` orders);
- ``coord_idf``: the same with each lexeme counted by its idf (its largest over the
  columns), so matching the rare word of a question weighs more than a common one.

``structure_bm25`` without a factor (p = 0) is evaluated as a variant too: it must
give the shipped policy's rank for every question (checked; the run stops if not).

The choice, on the development corpora only: a variant is kept only if the MRR
averaged over the ``-notests`` corpora rises with a 95 % interval (a bootstrap
resampling each corpus's questions apart) above 0, and no development corpus
(``--history``, ``--beir``) has its MRR significantly lowered (paired interval over
questions). ``--check`` corpora are evaluated after the choice, choosing nothing.

    python bench/coord.py --history DIR [--history DIR]... [--beir DIR]...
        [--check DIR]... [--reuse DSN]   # an existing migrated database (loads once)
        [--grid coord|bm25f|sibling|both|all|candidate]  # candidate: coord_all_p0.25
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from common import OUT_DIR, base_parser
from structure import (
    CONTROL,
    database,
    evaluate,
    mean_interval,
    measured,
    registered,
    significantly_lower,
    versus_control,
)

from riido_pg.evaluation import batch as batch_module
from riido_pg.evaluation import scoring
from riido_pg.evaluation.scoring import ColumnWeights
from riido_pg.ranking.policies import STRUCTURE_BM25, get_policy
from riido_pg.ranking.policy.skeleton import IDENT, NAME, RAW, EvalScores
from riido_pg.ranking.policy.structure import Structure

EXPONENTS = (0.1, 0.25, 0.5, 1.0, 2.0)
SIBLING_EXPONENTS = (0.5, 1.0, 2.0)
BM25F_W = (6.0, 9.0, 12.0)
BM25F_R = (1.0, 2.0, 4.0, 8.0)
#: The one variant a second round judges (``--grid candidate``): the coordination
#: factor over every column at p = 0.25 (larger exponents lowered cosqa-dev).
CANDIDATE_P = (0.25, "all")
CANDIDATE = "coord_all_p0.25"
COLUMN_SETS: dict[str, tuple[str, ...]] = {
    "all": (RAW, IDENT, NAME),
    "idname": (IDENT, NAME),
}

#: Each column's weights (kept alive while recorded) -> its terms (lexemes) in
#: column order and each term's idf.
_TERMS: dict[int, tuple[ColumnWeights, list[str], dict[str, float], sp.csr_matrix, float]] = {}
_original_weights = scoring._column_weights


def _recording(
    rows: list[Any], lexemes: Sequence[Sequence[str]], docs: Any, k1: float, b: float
) -> ColumnWeights:
    weights = _original_weights(rows, lexemes, docs, k1, b)
    term: dict[str, int] = {}
    idf: dict[str, float] = {}
    for r in rows:  # the order _column_weights numbers its terms in
        term.setdefault(str(r[0]), len(term))
        idf[str(r[0])] = float(r[1])
    # each entry's tf / (1 - b + b * dl / avgdl) (documents x terms), for BM25F
    d_ords, d_terms, d_tf = [], [], []
    gone = {o for r in rows if r[6] for o in r[6]}
    for r in rows:
        avgdl = float(r[2])
        for o, tf, dl in zip(r[3], r[4], r[5], strict=True):
            if o in gone:
                continue
            d_ords.append(o)
            d_terms.append(term[str(r[0])])
            d_tf.append(float(tf) / (1.0 - b + b * float(dl) / avgdl))
    norm = sp.csr_matrix(
        (np.asarray(d_tf), (docs.place(np.asarray(d_ords, dtype=np.int64)), np.asarray(d_terms))),
        shape=(docs.count, len(term)),
    )
    _TERMS[id(weights)] = (weights, list(term), idf, norm, k1)
    return weights


#: The snapshot being ranked (its prepared questions and weights) and the batch's
#: first question.
_NOW: dict[str, Any] = {}
_original_batch = batch_module._evaluate_batch


def _tracking(questions: Any, terms: Any, ready: Any, start: int, *rest: Any) -> Iterator[Any]:
    if _NOW.get("ready") is not ready:  # a new snapshot: forget the previous weights
        alive = {id(c) for c in ready.columns.values()}
        for k in [k for k in _TERMS if k not in alive]:
            del _TERMS[k]
        _NOW.clear()
        _NOW["ready"] = ready
    _NOW["start"], _NOW["stop"] = start, start + len(questions)
    yield from _original_batch(questions, terms, ready, start, *rest)


_original_prepare = batch_module.prepare


def _with_ids(*args: Any, **kwargs: Any) -> Any:
    """Read every document's id (as for run files): the sibling variant groups
    documents by file."""
    return _original_prepare(*args, **{**kwargs, "run_files": True})


scoring._column_weights = _recording  # type: ignore[assignment]
batch_module._evaluate_batch = _tracking  # type: ignore[assignment]
batch_module.prepare = _with_ids  # type: ignore[assignment]


def files() -> np.ndarray:
    """Per document place of the current snapshot, its file's number (the id before
    its first ``:``; an id without one is a file of its own)."""
    ready = _NOW["ready"]
    if "files" not in _NOW:
        numbers: dict[str, int] = {}
        _NOW["files"] = np.array(
            [numbers.setdefault(i.split(":", 1)[0], len(numbers)) for i in ready.doc_ids],
            dtype=np.int64,
        )
    found: np.ndarray = _NOW["files"]
    return found


def matched(cols: tuple[str, ...], by_idf: bool) -> tuple[np.ndarray, np.ndarray]:
    """For the current batch: questions x documents, the distinct question lexemes
    (or their idf) each document holds in any of ``cols``; and per question, the
    total over its lexemes in those columns."""
    ready, start, stop = _NOW["ready"], _NOW["start"], _NOW["stop"]
    vocab: dict[str, int] = {}
    idf: dict[str, float] = {}
    parts = []
    for c in cols:
        weights, names, col_idf = _TERMS[id(ready.columns[c])][0:3]
        for x in names:
            vocab.setdefault(x, len(vocab))
            idf[x] = max(idf.get(x, 0.0), col_idf[x])
        parts.append((weights, names))
    n_docs = ready.docs.count
    docs_v = sp.csr_matrix((n_docs, len(vocab)), dtype=np.float64)
    q_v = sp.csr_matrix((stop - start, len(vocab)), dtype=np.float64)
    for weights, names in parts:
        to_vocab = sp.csr_matrix(
            (np.ones(len(names)), ([*range(len(names))], [vocab[x] for x in names])),
            shape=(len(names), len(vocab)),
        )
        has = (weights.by_document != 0).astype(np.float64)
        docs_v = docs_v + has @ to_vocab
        q_v = q_v + weights.questions[start:stop].astype(np.float64) @ to_vocab
    docs_v.data = np.ones_like(docs_v.data)
    q_v.data = np.ones_like(q_v.data)
    lexeme = np.ones(len(vocab))
    if by_idf:
        for x, i in vocab.items():
            lexeme[i] = idf[x]
    weighted_q = q_v @ sp.diags(lexeme)
    counts = np.asarray((weighted_q @ docs_v.T).todense())
    # the question's own lexemes in these columns, matched in the snapshot or not
    # (those matched nowhere count 1 and idf 0: a constant per question either way)
    of_cols = [set(t.of(c)) for t in ready.terms[start:stop] for c in cols]
    per_q = [
        set().union(*of_cols[i * len(cols) : (i + 1) * len(cols)]) for i in range(stop - start)
    ]
    totals = np.array(
        [
            sum(lexeme[vocab[x]] if x in vocab else (0.0 if by_idf else 1.0) for x in q)
            for q in per_q
        ]
    )
    return counts, totals


class Coordinated(Structure):
    """``structure_bm25``'s score times ``(matched / total) ^ p``."""

    def __init__(self, p: float, cols: str, by_idf: bool) -> None:
        shipped = get_policy(STRUCTURE_BM25).combiner
        assert isinstance(shipped, Structure)
        super().__init__(**shipped.values)
        self.__dict__["coord"] = (p, cols, by_idf)

    @property
    def key(self) -> str:
        return f"{super().key} coord {self.__dict__['coord']!r}"

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        summed = super().scores(batch)
        p, cols, by_idf = self.__dict__["coord"]
        if p == 0:
            return summed
        counts, totals = matched(COLUMN_SETS[cols], by_idf)
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        got = counts[rows, summed.indices]
        total = np.maximum(totals[rows], 1e-12)
        # a document the chosen columns miss (matched in raw alone) keeps the
        # smallest non-zero share rather than dropping out
        share = np.clip(got / total, 1e-6, 1.0)
        summed.data = summed.data * np.power(share, p)
        return summed


def bm25f(w_body: float, w_name: float) -> sp.csr_matrix:
    """For the current batch: questions x documents, BM25F of the identifier-split
    question over the two identifier-split fields, the body's identifiers and the
    name: per lexeme, tf~ = w_body * tf_ident / B_ident + w_name * tf_name (the name
    field has b = 0), then one saturation idf * tf~ / (k1 + tf~), the idf the body's
    (the name's where the body lacks the lexeme), summed over the question's lexemes."""
    ready, start, stop = _NOW["ready"], _NOW["start"], _NOW["stop"]
    vocab: dict[str, int] = {}
    idf: dict[str, float] = {}
    tilde = None
    q_v = None
    k1 = 1.2
    for c in (IDENT, NAME):
        _, names, col_idf, _, k1 = _TERMS[id(ready.columns[c])]
        for x in names:
            vocab.setdefault(x, len(vocab))
            idf.setdefault(x, col_idf[x])
    for c, w in ((IDENT, w_body), (NAME, w_name)):
        weights, names, _, norm, _ = _TERMS[id(ready.columns[c])]
        to_vocab = sp.csr_matrix(
            (np.ones(len(names)), ([*range(len(names))], [vocab[x] for x in names])),
            shape=(len(names), len(vocab)),
        )
        part = w * (norm @ to_vocab)
        tilde = part if tilde is None else tilde + part
        qp = weights.questions[start:stop].astype(np.float64) @ to_vocab
        q_v = qp if q_v is None else q_v + qp
    assert tilde is not None and q_v is not None
    tilde = tilde.tocsc()
    idf_v = np.array([idf[x] for x in vocab])
    cols = np.repeat(np.arange(tilde.shape[1]), np.diff(tilde.indptr))
    tilde.data = idf_v[cols] * tilde.data / (k1 + tilde.data)
    q_v.data = np.ones_like(q_v.data)
    return (q_v @ tilde.T).tocsr()


class _Shim:
    """A batch whose identifier and name scores are replaced."""

    def __init__(self, batch: EvalScores, scores: dict[str, sp.csr_matrix]) -> None:
        self._batch = batch
        self.scores = scores

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batch, name)


class FieldsTogether(Structure):
    """``structure_bm25`` with ``w_ident * identifier_bm25 + w_name * name_bm25``
    replaced by ``w * BM25F(ident, name; 1, r)``."""

    def __init__(self, w: float, r: float) -> None:
        shipped = get_policy(STRUCTURE_BM25).combiner
        assert isinstance(shipped, Structure)
        super().__init__(**{**shipped.values, "w_ident": w, "w_name": 0.0})
        self.__dict__["f"] = (w, r)

    @property
    def key(self) -> str:
        return f"{super().key} bm25f {self.__dict__['f']!r}"

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        from riido_pg.ranking import bm25 as b

        _, r = self.__dict__["f"]
        f = bm25f(1.0, r) * b.SCALE
        empty = sp.csr_matrix(f.shape)
        shim = _Shim(batch, {RAW: batch.scores[RAW], IDENT: f, NAME: empty})
        return super().scores(shim)  # type: ignore[arg-type]


def fields_together(w: float, r: float) -> str:
    name = f"bm25f_w{w:g}_r{r:g}"
    return registered(name, lambda: FieldsTogether(w, r))


class Siblings(Coordinated):
    """``structure_bm25``'s score times ``(matched / most) ^ p``, ``most`` the most
    any document of the same file matches: only siblings are reordered."""

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        summed = Structure.scores(self, batch)
        p, cols, by_idf = self.__dict__["coord"]
        counts, _ = matched(COLUMN_SETS[cols], by_idf)
        place_file = files()
        order = np.argsort(place_file, kind="stable")
        sorted_files = place_file[order]
        starts = np.flatnonzero(np.r_[True, sorted_files[1:] != sorted_files[:-1]])
        most = np.maximum.reduceat(counts[:, order], starts, axis=1)  # questions x files
        group = np.empty(len(place_file), dtype=np.int64)
        group[order] = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(order)]))
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        got = counts[rows, summed.indices]
        top = most[rows, group[summed.indices]]
        share = np.clip(got / np.maximum(top, 1e-12), 1e-6, 1.0)
        summed.data = summed.data * np.power(share, p)
        return summed


def siblings(p: float, cols: str, by_idf: bool = False) -> str:
    name = f"sibling{'_idf' if by_idf else ''}_{cols}_p{p:g}"
    return registered(name, lambda: Siblings(p, cols, by_idf))


#: Per question of the corpus being evaluated: the rank correlation of the documents'
#: coverage (matched lexemes, every column) with their raw length (``--lengths``).
CORRELATIONS: list[float] = []


class Lengths(Coordinated):
    """``structure_bm25`` unchanged; records, per question, Spearman's correlation
    between what each document it scores holds of the question and its length."""

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        from scipy.stats import spearmanr

        summed = Structure.scores(self, batch)
        counts, _ = matched(COLUMN_SETS["all"], False)
        assert batch.lengths is not None
        for row in range(summed.shape[0]):
            docs = summed.indices[summed.indptr[row] : summed.indptr[row + 1]]
            held = counts[row, docs]
            if len(docs) > 2 and np.ptp(held) > 0:
                CORRELATIONS.append(float(spearmanr(held, batch.lengths[docs]).statistic))
        return summed


def coordinated(p: float, cols: str, by_idf: bool = False) -> str:
    name = f"coord{'_idf' if by_idf else ''}_{cols}_p{p:g}"
    return registered(name, lambda: Coordinated(p, cols, by_idf))


def significantly_higher(m: dict[str, Any], base: dict[str, Any]) -> bool:
    return significantly_lower(base, m)


def mark(m: dict[str, Any], base: dict[str, Any]) -> str:
    """``m``'s MRR, ↑ / ↓ where its paired interval against ``base`` excludes 0."""
    up = "↑" if significantly_higher(m, base) else "↓" if significantly_lower(m, base) else ""
    return f"{m['mrr']:.4f}{' ' + up if up else ''}"


def summary(results: dict[str, Any], grid: list[str], title: str) -> list[str]:
    """One row per variant: its MRR on every corpus (↑ / ↓ against the shipped
    policy), the mean over the ``-notests`` corpora and that mean's difference from
    the shipped policy's with its 95 % interval. Returns the variants that the rule
    keeps: that interval above 0 and no corpus significantly lower."""
    corpora = list(results)
    structure = [c for c in corpora if c.endswith("-notests")]
    none = grid[0]
    print(f"\n{title}\n")
    print(f"| variant | {' | '.join(corpora)} | mean, no tests | − shipped [95 %] |")
    print("|---|" + "---:|" * (len(corpora) + 1) + "---|")
    kept = []
    for g in grid:
        mean = sum(results[c][g]["mrr"] for c in structure) / max(1, len(structure))
        d, low, high = mean_interval([(results[c][g], results[c][none]) for c in structure])
        cells = " | ".join(mark(results[c][g], results[c][none]) for c in corpora)
        print(f"| {g} | {cells} | {mean:.4f} | {d:+.4f} [{low:+.4f}, {high:+.4f}] |")
        lowered = any(significantly_lower(results[c][g], results[c][none]) for c in corpora)
        if g != none and low > 0 and not lowered:
            kept.append(g)
    return kept


def main() -> None:
    p = base_parser("coordination factors beside structure_bm25, offline")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--beir", type=Path, action="append", default=[], help="a BEIR dev corpus")
    p.add_argument("--check", type=Path, action="append", default=[], help="a check corpus")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument(
        "--grid",
        choices=("coord", "bm25f", "sibling", "both", "all", "candidate"),
        default="coord",
        help="which signals (both: coord and bm25f; all: the three; candidate: "
        f"{CANDIDATE} alone beside p = 0)",
    )
    p.add_argument(
        "--tables", type=Path, nargs="+", default=None, help="only print the tables of saved runs"
    )
    p.add_argument(
        "--lengths",
        action="store_true",
        help="only the mean rank correlation of coverage and length, per corpus",
    )
    args = p.parse_args()
    if args.lengths:
        name = "coord_lengths"
        registered(name, lambda: Lengths(0.0, "all", False))
        with database(args.dsn, args.reuse, args.keep) as dsn:
            for path in [*args.history, *args.beir, *args.check]:
                CORRELATIONS.clear()
                evaluate(dsn, path, [name])
                print(
                    f"{path.name}: Spearman(coverage, length) over the matched documents, "
                    f"mean over {len(CORRELATIONS)} questions {np.mean(CORRELATIONS):+.3f}, "
                    f"median {np.median(CORRELATIONS):+.3f}",
                    flush=True,
                )
        return
    if args.tables:  # merge saved runs (variants present in every corpus of each)
        results: dict[str, Any] = {}
        checks: dict[str, Any] = {}
        for f in args.tables:
            saved = json.loads(f.read_text())
            for part, into in ((saved["results"], results), (saved["checks"], checks)):
                for c, r in part.items():
                    into.setdefault(c, {}).update(r)
        names = [set(r) for r in [*results.values(), *checks.values()]]
        common = set.intersection(*names) if names else set()
        order = list(next(iter([*results.values(), *checks.values()])))
        variants = [coordinated(0.0, "all")] + [
            g for g in order if g in common and g.startswith(("coord", "bm25f", "sibling"))
        ]
        variants = list(dict.fromkeys(variants))
        kept = summary(results, variants, "development corpora") if results else []
        print(f"kept: {', '.join(kept) or 'none'}")
        if checks:
            summary(checks, variants, "check corpora (choosing nothing)")
        return
    grid = [coordinated(0.0, "all")]
    if args.grid == "candidate":
        grid.append(coordinated(*CANDIDATE_P))
    if args.grid in ("coord", "both", "all"):
        grid += [coordinated(e, c) for c in COLUMN_SETS for e in EXPONENTS]
        grid += [coordinated(e, "all", True) for e in EXPONENTS]
    if args.grid in ("bm25f", "both", "all"):
        grid += [fields_together(w, r) for w in BM25F_W for r in BM25F_R]
    if args.grid in ("sibling", "all"):
        grid += [siblings(e, "all", i) for i in (False, True) for e in SIBLING_EXPONENTS]
    none = grid[0]
    corpora = {h.name: h for h in [*args.history, *args.beir]}
    results = {}
    with database(args.dsn, args.reuse, args.keep) as dsn:
        for c, path in corpora.items():
            results[c] = evaluate(dsn, path, grid)
            same = results[c][none]["ranks"] == results[c][STRUCTURE_BM25]["ranks"]
            assert same, f"{c}: p = 0 does not reproduce {STRUCTURE_BM25}"
            print(c, {g: round(results[c][g]["mrr"], 4) for g in grid}, flush=True)
        checks = {h.name: evaluate(dsn, h, grid) for h in args.check}
    if results:
        kept = summary(results, grid, "development corpora")
        print(f"kept: {', '.join(kept) or 'none'}")
    if checks:
        summary(checks, grid, "check corpora (choosing nothing)")
    table = {**results, **checks}
    print("\n| corpus | variant | R@1 / R@10 / MRR | − shipped [95 %] | − control [95 %] |")
    print("|---|---|---|---|---|")
    for c, r in table.items():
        label = c if c in corpora else f"{c} (check)"
        for g in grid:
            print(
                f"| {label} | {g} | {measured(r[g])} | {versus_control(r[g], r[STRUCTURE_BM25])} "
                f"| {versus_control(r[g], r[CONTROL])} |"
            )
    out = args.out or OUT_DIR / "coord.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": results, "checks": checks}, indent=2))


if __name__ == "__main__":
    main()
