"""A history-similarity prior, evaluated offline beside the shipped ``structure_bm25``
(docs/evaluation.md "History similarity (2026-12-06)").

A change request resembles earlier change requests of the same code (bug
localization's "similar past reports"). For a question of a history corpus, ranked in
the snapshot of its parent revision R:

- the past commits are R's last N commits that are not merges, in ``git rev-list
  --no-merges`` order from R (R included when it is no merge): the commits a history
  corpus draws its questions from (it reads ``git log`` and skips merges), all of them
  ancestors of R, so nothing after the question is read (the question's own commit
  is a child of R);
- each past commit i has its subject, cleaned as a question's is
  (:func:`~riido_pg.corpora.history.subjects.clean_subject`), and the functions it
  changed *at that commit*: git's diff between i and its parent, on i's side, mapped
  to the innermost function of each changed line by the rules of a history corpus's
  targets (test functions left out), each function taken by its key, the id without
  its trailing line number (``path:qualified.name``);
- F_i is the set of R's documents whose key one of those functions has (a function
  renamed, moved or removed since is lost; overloads sharing a key all count);
- sim_i is BM25 (k1 = 1.2, b = 0.75) of the question against the subject, both as
  the identifier column analyses them (riido's identifier splitting, then the
  snapshot's text search configuration: distinct lexemes, tf 1), idf and average
  length taken over the window's N subjects;
- H(f) = sum of sim_i / |F_i| over the window's commits i with f in F_i, and the
  variant ranks by ``structure_bm25``'s score (as shipped: recency prior included)
  times ``1 + beta * H(f) / max H`` (max over the snapshot's documents; a question
  whose H is 0 everywhere ranks as shipped).

Each (N, beta) is registered as a policy whose evaluation score is the shipped score
times that factor, evaluated with the shipped ``Database.evaluate`` beside
``structure_bm25`` and the control. beta = 0 is evaluated too and must give
``structure_bm25``'s rank for every question (checked). The rule that decides is
written in docs/evaluation.md before the grid ran; the script prints what it needs:
the mean MRR over the ``-notests`` ``--history`` corpora, its difference from the
shipped policy with a 95 % interval (:func:`structure.mean_interval`), and which
corpora a setting lowers significantly. ``--check`` corpora are evaluated after the
choice and choose nothing.

Since schema revision 0025 the shipped ``structure_bm25`` holds the prior itself
(N = 1000, beta = 0.5: docs/evaluation.md "History similarity", Implemented): the
variants here multiply the shipped score *without* it (``history_prior`` 0), and
their ``structure_bm25`` column is the prior as shipped; beta = 0 is then checked
against ``structure_bm25`` only when the shipped beta is 0. The tables of
docs/evaluation.md were made before (commits 49ffcf1 and 005017a).

The past commits' subjects and changed functions are read once per repository and
cached in ``--cache DIR`` (JSON, keyed by the repository path and commit).

    python bench/history_similarity.py --history DIR [--history DIR]... [--check DIR]...
        [--reuse DSN]   # an existing migrated database holding the snapshots
        [--cache DIR] [--n 50 --n 200 ...] [--beta 0.5 ...]
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from common import OUT_DIR, base_parser, connect
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
from riido_pg.extract.similar import (
    RevisionWindow,
    documents_by_key,
    history_weights,
    read_commits,
)
from riido_pg.ranking.policies import STRUCTURE_BM25, get_policy
from riido_pg.ranking.policy.skeleton import EvalScores
from riido_pg.resources import sql_text
from riido_pg.splitting import split_identifiers

WINDOWS = (50, 200, 1000)
BETAS = (0.25, 0.5, 1.0, 2.0)


# --- the past commits, read from the repository --------------------------------------


def commit_changes(repository_path: Path, commits: Sequence[str]) -> dict[str, Any]:
    """Per commit: its cleaned subject and the keys of the functions it changed, on
    its own side of the diff from its (first) parent
    (:func:`riido_pg.extract.similar.read_commits`)."""
    return {
        p.commit: {"subject": p.subject, "keys": sorted(p.keys)}
        for p in read_commits(repository_path, commits)
    }


def windows(repository_path: Path, revisions: Sequence[str], n: int) -> dict[str, list[str]]:
    """Per revision R, its last ``n`` non-merge commits (R's ancestors, R included),
    newest first: the window a load of R stores (:class:`RevisionWindow`)."""
    return {r: RevisionWindow(repository_path, r, n).shas() for r in dict.fromkeys(revisions)}


class History:
    """One repository's past commits, read once (cached on disk)."""

    def __init__(self, repository_path: Path, revisions: Sequence[str], cache: Path) -> None:
        began = time.perf_counter()
        self.windows = windows(repository_path, revisions, max(WINDOWS))
        tag = hashlib.sha256(str(repository_path).encode()).hexdigest()[:12]
        path = cache / f"{repository_path.parent.name}-{tag}.json"
        self.commits: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        wanted = [c for w in self.windows.values() for c in w]
        missing = [c for c in dict.fromkeys(wanted) if c not in self.commits]
        if missing:
            print(f"{repository_path}: reading {len(missing)} commits", flush=True)
            self.commits.update(commit_changes(repository_path, missing))
            cache.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.commits))
        print(
            f"{repository_path}: {len(self.commits)} commits ({time.perf_counter() - began:.0f} s)",
            flush=True,
        )


# --- the similarity, per question -----------------------------------------------------


def subject_lexemes(dsn: str, texts: Sequence[str], text_config: str = "english") -> list[set[str]]:
    """Each text's distinct lexemes as the identifier column analyses a question."""
    conn = connect(dsn)
    try:
        rows = conn.execute(
            sql_text("eval_question_lexemes"),
            {
                "text_config": text_config,
                "raw": list(texts),
                "ident": [split_identifiers(t) for t in texts],
            },
        ).fetchall()
    finally:
        conn.close()
    return [set(ident) for _raw, ident in rows]


class Corpus:
    """What the variants need of one history corpus: per question, its parent and
    lexemes; the repository's past commits and their subjects' lexemes."""

    def __init__(self, directory: Path, dsn: str, cache: Path) -> None:
        manifest = json.loads((directory / "history.json").read_text())
        self.questions: dict[str, dict[str, Any]] = {}
        for line in (directory / "queries.jsonl").read_text().splitlines():
            q = json.loads(line)
            self.questions[q["_id"]] = {"parent": q["metadata"]["parent"], "text": q["text"]}
        repo = Path(manifest["repository"]["path"])
        parents = [q["parent"] for q in self.questions.values()]
        self.history = History(repo, parents, cache)
        shas = list(self.history.commits)
        lex = subject_lexemes(dsn, [self.history.commits[c]["subject"] for c in shas])
        self.subject_lexemes = dict(zip(shas, lex, strict=True))
        ids = list(self.questions)
        qlex = subject_lexemes(dsn, [self.questions[i]["text"] for i in ids])
        for i, lexemes in zip(ids, qlex, strict=True):
            self.questions[i]["lexemes"] = lexemes
        self._h: dict[tuple[str, int, int], np.ndarray] = {}

    def h(self, question_id: str, n: int, doc_ids: Sequence[str], snapshot: int) -> np.ndarray:
        """H over the snapshot's document places, divided by its largest value (all
        zeros when nothing matches)."""
        memo = (question_id, n, snapshot)
        if memo in self._h:
            return self._h[memo]
        q = self.questions[question_id]
        window = self.history.windows[q["parent"]][:n]
        places = _places_by_key(doc_ids, snapshot)
        weights = history_weights(
            q["lexemes"],
            [self.subject_lexemes[c] for c in window],
            [
                [p for k in self.history.commits[c]["keys"] for p in places.get(k, ())]
                for c in window
            ],
        )
        h = np.zeros(len(doc_ids))
        h[np.fromiter(weights, dtype=np.int64, count=len(weights))] = list(weights.values())
        self._h[memo] = h
        return h


_KEYS: dict[int, dict[str, list[int]]] = {}


def _places_by_key(doc_ids: Sequence[str], snapshot: int) -> dict[str, list[int]]:
    if snapshot not in _KEYS:
        _KEYS.clear()
        _KEYS[snapshot] = documents_by_key({i: place for place, i in enumerate(doc_ids)})
    return _KEYS[snapshot]


# --- the variants, inside the shipped evaluation --------------------------------------

#: The corpus being evaluated, and the batch being ranked.
_NOW: dict[str, Any] = {}
_original_batch = batch_module._evaluate_batch
_original_prepare = batch_module.prepare


def _tracking(questions: Any, terms: Any, ready: Any, start: int, *rest: Any) -> Iterator[Any]:
    if _NOW.get("ready") is not ready:  # a new snapshot: a new number (ids are reused)
        _NOW["snapshot"] = _NOW.get("snapshot", 0) + 1
    _NOW["ready"], _NOW["questions"] = ready, list(questions)
    yield from _original_batch(questions, terms, ready, start, *rest)


def _with_ids(*args: Any, **kwargs: Any) -> Any:
    """Read every document's id (as for run files): H is mapped by id."""
    return _original_prepare(*args, **{**kwargs, "run_files": True})


batch_module._evaluate_batch = _tracking  # type: ignore[assignment]
batch_module.prepare = _with_ids  # type: ignore[assignment]


from riido_pg.ranking.policy.structure import Structure  # noqa: E402


class Similar(Structure):
    """``structure_bm25``'s score times ``1 + beta * H(f) / max H``."""

    def __init__(self, n: int, beta: float) -> None:
        shipped = get_policy(STRUCTURE_BM25).combiner
        assert isinstance(shipped, Structure)
        super().__init__(**{**shipped.values, "history_prior": 0.0})
        self.__dict__["simi"] = (n, beta)

    @property
    def key(self) -> str:
        return f"{super().key} simi {self.__dict__['simi']!r}"

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        summed = super().scores(batch)
        n, beta = self.__dict__["simi"]
        if beta == 0:
            return summed
        corpus: Corpus = _NOW["corpus"]
        ready = _NOW["ready"]
        for row, q in enumerate(_NOW["questions"]):
            h = corpus.h(q.id, n, ready.doc_ids, _NOW["snapshot"])
            lo, hi = summed.indptr[row], summed.indptr[row + 1]
            summed.data[lo:hi] = summed.data[lo:hi] * (1.0 + beta * h[summed.indices[lo:hi]])
        return summed


def similar(n: int, beta: float) -> str:
    return registered(f"simi_n{n}_b{beta:g}", lambda: Similar(n, beta))


def summary(results: dict[str, Any], grid: list[str], none: str, title: str) -> list[str]:
    """One row per setting: MRR per corpus (↑ / ↓: the paired interval against the
    shipped policy lies above / below 0), the mean over the ``-notests`` corpora, its
    difference with the 95 % interval. Returns the settings that lower no corpus
    significantly, best mean first."""
    corpora = list(results)
    structure = [c for c in corpora if c.endswith("-notests")]
    print(f"\n{title}\n")
    print(f"| setting | {' | '.join(corpora)} | mean, no tests | − shipped [95 %] |")
    print("|---|" + "---:|" * (len(corpora) + 1) + "---|")
    safe = []
    for g in grid:
        mean = sum(results[c][g]["mrr"] for c in structure) / max(1, len(structure))
        d, low, high = mean_interval([(results[c][g], results[c][none]) for c in structure])
        cells = []
        for c in corpora:
            up = significantly_lower(results[c][none], results[c][g])
            down = significantly_lower(results[c][g], results[c][none])
            cells.append(f"{results[c][g]['mrr']:.4f}{' ↑' if up else ' ↓' if down else ''}")
        print(f"| {g} | {' | '.join(cells)} | {mean:.4f} | {d:+.4f} [{low:+.4f}, {high:+.4f}] |")
        if not any(significantly_lower(results[c][g], results[c][none]) for c in corpora):
            safe.append((mean, -grid.index(g), g))
    return [g for _, _, g in sorted(safe, reverse=True)]


def main() -> None:
    p = base_parser("a history-similarity prior beside structure_bm25, offline")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--check", type=Path, action="append", default=[], help="a check corpus")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument("--cache", type=Path, default=OUT_DIR / "history_similarity_cache")
    p.add_argument("--n", type=int, action="append", default=None, help="window sizes")
    p.add_argument("--beta", type=float, action="append", default=None, help="betas")
    args = p.parse_args()
    ns = args.n or list(WINDOWS)
    betas = args.beta or list(BETAS)
    none = similar(max(ns), 0.0)
    grid = [none] + [similar(n, b) for n in ns for b in betas]
    results: dict[str, Any] = {}
    checks: dict[str, Any] = {}
    with database(args.dsn, args.reuse, args.keep) as dsn:
        for into, paths in ((results, args.history), (checks, args.check)):
            for path in paths:
                began = time.perf_counter()
                _NOW["corpus"] = Corpus(path, dsn, args.cache)
                into[path.name] = evaluate(dsn, path, grid)
                same = into[path.name][none]["ranks"] == into[path.name][STRUCTURE_BM25]["ranks"]
                shipped_off = get_policy(STRUCTURE_BM25).combiner.values["history_prior"] == 0
                assert same or not shipped_off, f"{path.name}: beta = 0 is not {STRUCTURE_BM25}"
                print(
                    path.name,
                    {g: round(into[path.name][g]["mrr"], 4) for g in grid},
                    f"({time.perf_counter() - began:.0f} s)",
                    flush=True,
                )
    chosen = None
    if results:
        safe = summary(results, grid[1:], none, "development corpora")
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
    if checks:
        summary(checks, grid[1:], none, "check corpora (choosing nothing)")
    # the chosen setting; a run of check corpora alone shows every setting it ran
    shown = [chosen] if chosen is not None else ([] if results else grid[1:])
    print("\n| corpus | control | shipped | " + " | ".join(shown) + " − shipped [95 %] |")
    for c, r in {**results, **checks}.items():
        label = c if c in results else f"{c} (check)"
        cells = [f"{measured(r[g])} | {versus_control(r[g], r[STRUCTURE_BM25])}" for g in shown]
        print(
            f"| {label} | {measured(r[CONTROL])} | {measured(r[STRUCTURE_BM25])} | "
            + " | ".join(cells)
            + " |"
        )
    out = args.out or OUT_DIR / "history_similarity.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"results": results, "checks": checks, "chosen": chosen}, indent=2))


if __name__ == "__main__":
    main()
