"""File-level evidence, evaluated offline beside the shipped ``structure_bm25``
(docs/evaluation.md "File-level evidence (2026-12-07)").

A change request often names a file's subject rather than a function; bug
localization ranks whole files. Each variant ranks by the shipped score times
``1 + gamma * S(file(f)) / max S`` (the maximum over the snapshot's files, per
question; a question whose S is 0 everywhere ranks as shipped), S one of:

- ``file_max``: the largest shipped score of the file's documents;
- ``file_sum``: the sum of the shipped scores of the file's documents;
- ``file_bm25``: BM25 (k1 = 1.2, b = 0.75) of the question over the file as one
  document in the raw column (tf summed over the file's documents, length the sum of
  their raw lengths, N the snapshot's files, df the files holding the lexeme, avgdl
  the mean file length; removed documents left out).

A document's file is its id without the trailing ``:LINE`` (or ``:LINE#N``) and the
qualified name before it (:func:`file_of`); an id without ``:`` is a file of its own.

Each (family, gamma) is registered as a policy whose evaluation score is the shipped
score times the factor, computed from the evaluation's own per-column term weights
and document ids (``bench/coord.py``'s hooks into the evaluation, imported), and
evaluated with the shipped ``Database.evaluate`` beside ``structure_bm25`` and the
control. gamma = 0 must give ``structure_bm25``'s rank for every question (checked).

The rule that decides (docs/evaluation.md, committed before the grid ran): among the
settings lowering no development corpus significantly, the highest MRR averaged over
the ``-notests`` ``--history`` corpora; KEEP only if that mean's paired 95 % interval
against the shipped policy (:func:`structure.mean_interval`) lies above 0. ``--check``
corpora are evaluated after the choice and choose nothing.

    python bench/file_evidence.py --history DIR [--history DIR]... [--beir DIR]...
        [--check DIR]... [--reuse DSN] [--gamma 0.5 ...] [--family max ...]
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from common import OUT_DIR, base_parser
from coord import _NOW
from history_similarity import summary
from structure import (
    CONTROL,
    database,
    evaluate,
    mean_interval,
    measured,
    registered,
    versus_control,
)

from riido_pg.evaluation import scoring
from riido_pg.evaluation.scoring import ColumnWeights
from riido_pg.ranking.policies import STRUCTURE_BM25, get_policy
from riido_pg.ranking.policy.skeleton import RAW, EvalScores
from riido_pg.ranking.policy.structure import Structure

FAMILIES = ("max", "sum", "bm25")
GAMMAS = (0.1, 0.25, 0.5, 1.0, 2.0)
K1, B = 1.2, 0.75
MEASURES = ("recall@1", "recall@10", "mrr")

_LINE = re.compile(r":[0-9]+(#[0-9]+)?\Z")


def file_of(doc_id: str) -> str:
    """A document's file: its id without the trailing ``:LINE`` and the qualified
    name (``src/a.py:C.f:12`` -> ``src/a.py``; ``click:click/core.py:f:3`` ->
    ``click:click/core.py``); an id without ``:`` is a file of its own."""
    head = _LINE.sub("", doc_id)
    return head.rsplit(":", 1)[0] if ":" in head else doc_id


# --- each column's raw term frequencies, recorded as the evaluation reads them -------

#: id(weights) -> (weights, documents x terms raw tf, removed documents left out)
_TF: dict[int, tuple[ColumnWeights, sp.csr_matrix]] = {}
_chained = scoring._column_weights  # bench/coord.py's recording, which calls the original


def _recording_tf(rows: list[Any], lexemes: Any, docs: Any, k1: float, b: float) -> ColumnWeights:
    weights = _chained(rows, lexemes, docs, k1, b)
    term: dict[str, int] = {}
    for r in rows:  # the order _column_weights numbers its terms in
        term.setdefault(str(r[0]), len(term))
    gone = {o for r in rows if r[6] for o in r[6]}
    ords: list[int] = []
    cols: list[int] = []
    tfs: list[float] = []
    for r in rows:
        for o, tf in zip(r[3], r[4], strict=True):
            if o not in gone:
                ords.append(o)
                cols.append(term[str(r[0])])
                tfs.append(float(tf))
    tf_matrix = sp.csr_matrix(
        (np.asarray(tfs), (docs.place(np.asarray(ords, dtype=np.int64)), np.asarray(cols))),
        shape=(docs.count, len(term)),
    )
    for k in list(_TF)[:-8]:  # forget the columns of earlier snapshots
        del _TF[k]
    _TF[id(weights)] = (weights, tf_matrix)  # the entry keeps its id from being reused
    return weights


scoring._column_weights = _recording_tf  # type: ignore[assignment]


# --- files of the snapshot being ranked ----------------------------------------------


def snapshot_files() -> tuple[np.ndarray, int]:
    """Per document place of the current snapshot, its file's number, and the count of
    files."""
    ready = _NOW["ready"]
    if "file_numbers" not in _NOW:
        numbers: dict[str, int] = {}
        _NOW["file_numbers"] = (
            np.array(
                [numbers.setdefault(file_of(i), len(numbers)) for i in ready.doc_ids],
                dtype=np.int64,
            ),
            len(numbers),
        )
    found: tuple[np.ndarray, int] = _NOW["file_numbers"]
    return found


def file_bm25(batch: EvalScores) -> np.ndarray:
    """Questions of the current batch x files: BM25 of each question's raw lexemes
    over each file as one document."""
    ready, start, stop = _NOW["ready"], _NOW["start"], _NOW["stop"]
    place_file, n_files = snapshot_files()
    weights, tf = _TF[id(ready.columns[RAW])]
    assert weights is ready.columns[RAW]
    n_docs = len(place_file)
    assert tf.shape[0] == n_docs
    to_file = sp.csr_matrix(
        (np.ones(n_docs), (place_file, np.arange(n_docs))), shape=(n_files, n_docs)
    )
    file_tf = (to_file @ tf).tocsc()  # files x terms
    assert batch.lengths is not None
    file_len = to_file @ batch.lengths.astype(np.float64)
    avgdl = float(file_len.mean()) if n_files else 1.0
    df = np.diff(file_tf.indptr)
    idf = np.log(1.0 + (n_files - df + 0.5) / (df + 0.5))
    cols = np.repeat(np.arange(file_tf.shape[1]), df)
    dl = file_len[file_tf.indices]
    t = file_tf.data
    file_tf.data = idf[cols] * t / (t + K1 * (1.0 - B + B * dl / max(avgdl, 1e-12)))
    q = weights.questions[start:stop].astype(np.float64)
    return np.asarray((q @ file_tf.T).todense())


class FileEvidence(Structure):
    """``structure_bm25``'s score times ``1 + gamma * S(file) / max S``."""

    def __init__(self, family: str, gamma: float) -> None:
        shipped = get_policy(STRUCTURE_BM25).combiner
        assert isinstance(shipped, Structure)
        super().__init__(**shipped.values)
        self.__dict__["file"] = (family, gamma)

    @property
    def key(self) -> str:
        return f"{super().key} file {self.__dict__['file']!r}"

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        summed = super().scores(batch)
        family, gamma = self.__dict__["file"]
        if gamma == 0 or summed.nnz == 0:
            return summed
        place_file, n_files = snapshot_files()
        rows = np.repeat(np.arange(summed.shape[0]), np.diff(summed.indptr))
        files = place_file[summed.indices]
        if family == "bm25":
            s = file_bm25(batch)
        else:
            s = np.zeros((summed.shape[0], n_files))
            if family == "max":
                np.maximum.at(s, (rows, files), summed.data)
            else:
                np.add.at(s, (rows, files), summed.data)
        top = s.max(axis=1)
        share = np.divide(s[rows, files], top[rows], out=np.zeros(len(rows)), where=top[rows] > 0)
        summed.data = summed.data * (1.0 + gamma * share)
        return summed


def setting(family: str, gamma: float) -> str:
    return registered(f"file_{family}_g{gamma:g}", lambda: FileEvidence(family, gamma))


def means(results: dict[str, Any], corpora: list[str], g: str) -> str:
    return " / ".join(
        f"{sum(results[c][g][k] for c in corpora) / len(corpora):.4f}" for k in MEASURES
    )


def main() -> None:
    p = base_parser("file-level evidence beside structure_bm25, offline")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--beir", type=Path, action="append", default=[], help="a BEIR dev corpus")
    p.add_argument("--check", type=Path, action="append", default=[], help="a check corpus")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument("--gamma", type=float, action="append", default=None, help="gammas")
    p.add_argument("--family", choices=FAMILIES, action="append", default=None)
    p.add_argument("--tables", type=Path, default=None, help="only print a saved run's tables")
    args = p.parse_args()
    none = setting("max", 0.0)
    grid = [setting(f, g) for f in args.family or FAMILIES for g in args.gamma or GAMMAS]
    results: dict[str, Any] = {}
    checks: dict[str, Any] = {}
    if args.tables:
        saved = json.loads(args.tables.read_text())
        results, checks = saved["results"], saved["checks"]
    else:
        with database(args.dsn, args.reuse, args.keep) as dsn:
            for into, paths in ((results, [*args.history, *args.beir]), (checks, args.check)):
                for path in paths:
                    began = time.perf_counter()
                    into[path.name] = r = evaluate(dsn, path, [none, *grid])
                    same = r[none]["ranks"] == r[STRUCTURE_BM25]["ranks"]
                    assert same, f"{path.name}: gamma = 0 is not {STRUCTURE_BM25}"
                    print(
                        path.name,
                        {g: round(r[g]["mrr"], 4) for g in [none, *grid]},
                        f"({time.perf_counter() - began:.0f} s)",
                        flush=True,
                    )
                    out = args.out or OUT_DIR / "file_evidence.json"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(json.dumps({"results": results, "checks": checks}))
    chosen = None
    if results:
        safe = summary(results, grid, none, "development corpora")
        chosen = safe[0] if safe else None
        print(f"\nchosen (highest mean among settings lowering no corpus): {chosen}")
        if chosen is not None:
            structure = [c for c in results if c.endswith("-notests")]
            d, low, high = mean_interval(
                [(results[c][chosen], results[c][none]) for c in structure]
            )
            print(
                f"keep rule: mean − shipped {d:+.4f} [{low:+.4f}, {high:+.4f}]:",
                "KEEP" if low > 0 else "DROP",
            )
            print(
                f"  R@1 / R@10 / MRR over the -notests: shipped {means(results, structure, none)}"
            )
            print(f"  {chosen}: {means(results, structure, chosen)}")
    if checks:
        summary(checks, grid, none, "check corpora (choosing nothing)")
        structure = [c for c in checks if c.endswith("-notests")]
        if structure:
            print("\nR@1 / R@10 / MRR averaged over the check -notests corpora:")
            for g in [none, *grid]:
                print(f"  {g}: {means(checks, structure, g)}")
    shown = [chosen] if chosen is not None else grid
    print("\n| corpus | setting | R@1 / R@10 / MRR | − shipped [95 %] | − control [95 %] |")
    print("|---|---|---|---|---|")
    for c, r in {**results, **checks}.items():
        label = c if c in results else f"{c} (check)"
        for g in [CONTROL, STRUCTURE_BM25, *shown]:
            print(
                f"| {label} | {g} | {measured(r[g])} | {versus_control(r[g], r[STRUCTURE_BM25])} "
                f"| {versus_control(r[g], r[CONTROL])} |"
            )


if __name__ == "__main__":
    main()
