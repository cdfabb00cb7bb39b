"""A change-history prior, evaluated offline beside the shipped ``structure_bm25``
(docs/evaluation.md "Change history (2026-12-07)").

Bug localization's "version history" signal: how often, and how recently, the
snapshot's window of past commits changed each function. For a question ranked in the
snapshot of its parent revision R, the window is R's as the evaluation reads it
(``riido.window_commits`` in window order: position ``age`` 0 is the newest commit,
each with the places of the snapshot's documents it changed; N = 1,000, the window's
size, whatever its length). Per document f:

- C(f) = g(sum of d(age_i)) over the window commits i that changed f, for a family:
  ``log`` d = 1, g(x) = ln(1 + x); ``exp`` d = exp(-age / 30), g(x) = x; ``google``
  d = 1 / (1 + exp(-12 t + 12)), t = 1 - age / N, g(x) = x;
- the variant ranks by ``structure_bm25``'s score as shipped (recency and
  history-similarity priors included; or with the recency factor 1, the question
  whether the signal replaces it) times ``1 + gamma * C(f) / max C`` (max over the
  snapshot's documents; C does not depend on the question).

Each (family, gamma, recency) is registered as a policy whose evaluation score is
that product, evaluated with the shipped ``Database.evaluate`` beside
``structure_bm25`` and the control (the batch tracking and the decision table of
:mod:`history_similarity`, imported). gamma = 0 with the recency prior kept must give
``structure_bm25``'s rank for every question (checked). ``--after`` corpora are
evaluated after the choice with the chosen setting and choose nothing.

    python bench/change_history.py --reuse DSN --history DIR [--history DIR]...
        [--saved JSON]...   # results of earlier runs, combined with this one's
        [--after DIR]... [--chosen NAME]   # after the choice, choosing nothing: NAME
                                           # (default: every setting) on old corpora

With the twelve fresh histories among the results (``--history`` or ``--saved``) it
prints the rule's table, choice and verdict.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from common import OUT_DIR, base_parser
from history_similarity import _NOW, summary
from structure import (
    CONTROL,
    MEASURES,
    database,
    evaluate,
    mean_interval,
    measured,
    registered,
    versus_control,
)

from riido_pg.extract.similar import SIMILAR_COMMITS
from riido_pg.ranking.policies import STRUCTURE_BM25, get_policy
from riido_pg.ranking.policy.skeleton import EvalScores
from riido_pg.ranking.policy.structure import Structure

FAMILIES = ("log", "exp", "google")
GAMMAS = (0.25, 0.5, 1.0, 2.0)
#: The recency factor kept (the signal complements it) or 1 (replaces it).
RECENCY = (1.75, 1.0)
TAU = 30.0
#: The fresh development histories the rule decides on, and the old check four.
FRESH = ("jinja", "werkzeug", "chi", "urfave", "hono", "hyper")
CHECK_FOUR = ("cobra", "got", "reqwest", "marshmallow")


def decay(family: str, ages: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """d(age) of each window position."""
    if family == "log":
        return np.ones_like(ages)
    if family == "exp":
        return np.exp(-ages / TAU)
    if family == "google":
        t = 1.0 - ages / SIMILAR_COMMITS
        return 1.0 / (1.0 + np.exp(-12.0 * t + 12.0))
    raise ValueError(family)


def change_weights(
    family: str, changed: list[list[int]], documents: int
) -> npt.NDArray[np.float64]:
    """C(f) / max C over the snapshot's document places (zeros without a window):
    ``changed[age]`` are the places window commit ``age`` changed."""
    d = decay(family, np.arange(len(changed), dtype=np.float64))
    c = np.zeros(documents)
    for age, places in enumerate(changed):
        if places:
            c[np.asarray(places, dtype=np.int64)] += d[age]
    if family == "log":
        c = np.log1p(c)
    top = float(c.max(initial=0.0))
    return c / top if top > 0 else c


_C: dict[tuple[int, str], npt.NDArray[np.float64]] = {}


def weights_now(family: str) -> npt.NDArray[np.float64] | None:
    """C / max C of the snapshot being ranked (None: it has no window)."""
    ready = _NOW["ready"]
    if ready.window is None or not ready.window[0]:
        return None
    memo = (_NOW["snapshot"], family)
    if memo not in _C:
        if len(_C) > 16:
            _C.clear()
        _C[memo] = change_weights(family, ready.window[1], ready.docs.count)
    return _C[memo]


class Changed(Structure):
    """``structure_bm25``'s score (recency factor ``recent``) times ``1 + gamma * C / max C``."""

    def __init__(self, family: str, gamma: float, recent: float) -> None:
        shipped = get_policy(STRUCTURE_BM25).combiner
        assert isinstance(shipped, Structure)
        super().__init__(**{**shipped.values, "recent_prior": recent})
        self.__dict__["freq"] = (family, gamma)

    @property
    def key(self) -> str:
        return f"{super().key} freq {self.__dict__['freq']!r}"

    def scores(self, batch: EvalScores) -> sp.csr_matrix:
        summed = super().scores(batch)
        family, gamma = self.__dict__["freq"]
        if gamma == 0:
            return summed
        c = weights_now(family)
        if c is not None:
            summed.data = summed.data * (1.0 + gamma * c[summed.indices])
        return summed


def changed(family: str, gamma: float, recent: float) -> str:
    return registered(
        f"freq_{family}_g{gamma:g}_r{recent:g}", lambda: Changed(family, gamma, recent)
    )


def grid() -> list[str]:
    """The 24 settings in the rule's order (family, then gamma, then recency)."""
    return [changed(f, g, r) for f in FAMILIES for g in GAMMAS for r in RECENCY]


def means(results: dict[str, Any], name: str) -> str:
    return " / ".join(
        f"{sum(r[name][k] for r in results.values()) / len(results):.4f}" for k in MEASURES
    )


def decide(results: dict[str, Any], none: str, settings: list[str]) -> tuple[str | None, str]:
    """The rule's choice (None: no setting lowers no corpus) and the best-mean setting."""
    safe = summary(results, settings, none, "development corpora")
    structure = [c for c in results if c.endswith("-notests")]
    best = min(
        settings,
        key=lambda g: (-sum(results[c][g]["mrr"] for c in structure), settings.index(g)),
    )
    chosen = safe[0] if safe else None
    print(f"\nchosen (highest mean among settings lowering no corpus): {chosen}")
    if chosen is not None:
        d, low, high = mean_interval([(results[c][chosen], results[c][none]) for c in structure])
        print(
            f"keep rule: mean − shipped {d:+.4f} [{low:+.4f}, {high:+.4f}]:",
            "KEEP" if low > 0 else "DROP",
        )
    return chosen, best


def report(results: dict[str, Any], after: dict[str, Any], shown: str) -> None:
    """Per corpus and averaged: the control, the shipped policy and ``shown``."""
    table = {**results, **{f"{c} (after)": r for c, r in after.items()}}
    print(f"\n| corpus | control | shipped | {shown} | − shipped [95 %] |")
    print("|---|---|---|---|---|")
    for c, r in table.items():
        print(
            f"| {c} | {measured(r[CONTROL])} | {measured(r[STRUCTURE_BM25])} "
            f"| {measured(r[shown])} | {versus_control(r[shown], r[STRUCTURE_BM25])} |"
        )
    groups = {
        "fresh, no tests": {c: r for c, r in results.items() if c.endswith("-notests")},
        "fresh, with tests": {c: r for c, r in results.items() if not c.endswith("-notests")},
        "old, no tests (after)": after,
        "old check four, no tests (after)": {
            c: r for c, r in after.items() if c.split("-")[0] in CHECK_FOUR
        },
    }
    for label, group in groups.items():
        if group:
            d, low, high = mean_interval([(r[shown], r[STRUCTURE_BM25]) for r in group.values()])
            print(
                f"{label} ({len(group)}): R@1 / R@10 / MRR control {means(group, CONTROL)},"
                f" shipped {means(group, STRUCTURE_BM25)}, {shown} {means(group, shown)},"
                f" − shipped {d:+.4f} [{low:+.4f}, {high:+.4f}]"
            )


def main() -> None:
    p = base_parser("a change-history prior beside structure_bm25, offline")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--after", type=Path, action="append", default=[], help="after the choice")
    p.add_argument("--chosen", default=None, help="the setting --after runs (default: chosen)")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument(
        "--saved", type=Path, action="append", default=[], help="results of earlier runs (JSON)"
    )
    args = p.parse_args()
    none = changed("log", 0.0, RECENCY[0])
    settings = grid()
    results: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for path in args.saved:
        earlier = json.loads(path.read_text())
        results.update(earlier.get("results", {}))
        after.update(earlier.get("after", {}))
    out = args.out or OUT_DIR / "change_history.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    chosen: str | None = args.chosen
    began = time.perf_counter()
    with database(args.dsn, args.reuse, args.keep) as dsn:
        for path in args.history:
            results[path.name] = evaluate(dsn, path, [none, *settings])
            same = results[path.name][none]["ranks"] == results[path.name][STRUCTURE_BM25]["ranks"]
            assert same, f"{path.name}: gamma = 0 is not {STRUCTURE_BM25}"
            print(
                path.name,
                {g: round(results[path.name][g]["mrr"], 4) for g in settings},
                f"({time.perf_counter() - began:.0f} s)",
                flush=True,
            )
        for path in args.after:  # the chosen setting, or every one (choosing nothing)
            after[path.name] = evaluate(dsn, path, [none, *([chosen] if chosen else settings)])
            print(path.name, f"({time.perf_counter() - began:.0f} s)", flush=True)
    out.write_text(json.dumps({"results": results, "after": after}, indent=2))
    fresh = [f"{r}-notests" for r in FRESH] + list(FRESH)
    if all(c in results for c in fresh):
        decided, best = decide({c: results[c] for c in fresh}, none, settings)
        chosen = chosen or decided or best
    if chosen is not None:
        report(results, after, chosen)


if __name__ == "__main__":
    main()
