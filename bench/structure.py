"""Choosing the constants of ``structure_bm25`` on the development corpora only, and
the table of docs/evaluation.md "Ranking with structure".

The development corpora are cosqa-dev, the docproxy corpus and history corpora of
repositories that are not evaluated anywhere else (``riido-pg corpus history REPO
--output DIR``; docs/evaluation.md names them and gives the commands). A history
corpus whose directory name ends in ``-notests`` was built with the test,
documentation and example paths excluded: structure is judged there and on the two
BEIR corpora (step 1); the priors on the corpora built with them (step 2).

Step 1 evaluates every (w_ident, w_name) of the grid with no prior (1) and no name
match (1) and keeps the pair with the highest MRR averaged over the structure corpora
(ties: the earlier point of the grid). Step 2 keeps those weights and evaluates every
(test prior, example prior) on the corpora with tests; it keeps the pair with the
largest priors (test prior first) within 0.001 of the highest mean MRR there: history
targets are never tests, documentation or examples, so these corpora always reward a
smaller prior, and a large one lets a test that matches much better than the code
still lead. Step 3 keeps the weights and the priors and evaluates every name match
factor of its grid on the structure corpora, keeping the highest mean MRR (ties: the
smaller factor). Step 4 keeps all of those and evaluates every length prior exponent
of its grid on every development corpus; it keeps, among the exponents that lower no
corpus's MRR significantly (the 95 % paired interval of the difference from exponent
0 lies below 0 on none), the one with the highest mean MRR over the structure corpora
(ties: the smaller).

``--check DIR`` (repeatable) adds corpora evaluated after every choice, which choose
nothing: each shipped policy and ``structure_bm25`` without the length prior, with
Recall@1, Recall@10, MRR and the intervals of the length prior's difference and of
the difference from the control.

Every variant is a registered policy evaluated in the same run as ``bm25``, the
control ``identifier_bm25_baseline_first`` and the other shipped policies, with the
shipped ``Database.evaluate``. The table gives each shipped policy's MRR difference
from the control with its 95 % paired bootstrap interval over questions
(:mod:`riido_pg.evaluation.significance`), and the share of its no-tests MRR that
``structure_bm25`` keeps with tests in each repository.

    python bench/structure.py --history DIR [--history DIR]... [--docproxy DIR]
        [--check DIR]...  # corpora that choose nothing
        [--reuse DSN]   # evaluate in an existing migrated database (loads once)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from common import OUT_DIR, base_parser, bench_database, connect
from corpus import development_corpora

from riido_pg import Database
from riido_pg.evaluation.significance import RESAMPLES, SEED, paired_interval
from riido_pg.ranking import Policy, register_policy
from riido_pg.ranking.policies import (
    BM25,
    IDENTIFIER_BM25_BASELINE_FIRST,
    IDENTIFIER_BM25_FUSED,
    IDENTIFIER_BM25_RRF,
    STRUCTURE_BM25,
    get_policy,
    policies,
)
from riido_pg.ranking.policy.skeleton import Combiner
from riido_pg.ranking.policy.structure import Structure

W_IDENT = (4.0, 6.0, 8.0)
W_NAME = (2.0, 4.0, 6.0, 8.0)
NAME_MATCHES = (1.0, 1.25, 1.5, 1.75, 2.0)
LENGTH_PRIORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 1.0)
TEST_PRIORS = (0.5, 0.3, 0.2, 0.1)
EXAMPLE_PRIORS = (1.0, 0.5, 0.3, 0.1)
MEASURES = ("recall@1", "recall@10", "mrr")
CONTROL = IDENTIFIER_BM25_BASELINE_FIRST
SHIPPED = (BM25, CONTROL, IDENTIFIER_BM25_FUSED, IDENTIFIER_BM25_RRF, STRUCTURE_BM25)


def registered(name: str, combiner: Callable[[], Combiner]) -> str:
    """``name``, registered as a policy ranking by ``combiner()`` unless it is one
    already (a variant is registered once, however often a sweep names it)."""
    if name not in {p.name for p in policies()}:
        register_policy(Policy(name, combiner(), name))
    return name


def variant(
    w_ident: float,
    w_name: float,
    test: float,
    example: float,
    match: float = 1.0,
    length: float = 0.0,
    recent: float = 1.0,
) -> str:
    """The registered name of one point of the grid (registered once)."""
    name = f"structure_i{w_ident:g}_n{w_name:g}_t{test:g}_e{example:g}_m{match:g}_l{length:g}"
    if recent != 1.0:
        name += f"_r{recent:g}"
    return registered(
        name, lambda: Structure(w_ident, w_name, test, example, match, length, recent)
    )


def evaluate(dsn: str, corpus: Path, names: list[str]) -> dict[str, Any]:
    """Each policy's means and, per question (in question id order), the rank of its
    first target."""
    conn = connect(dsn)
    try:
        chosen = list(dict.fromkeys([*SHIPPED, *names]))
        evaluation = Database(conn).evaluate(corpus, policies=chosen).evaluation
        means = evaluation.to_dict()["policies"]
        return {
            p: {
                **{k: means[p][k] for k in MEASURES},
                "ranks": [r.ranks[p] for r in evaluation.results],
            }
            for p in chosen
        }
    finally:
        conn.close()


@contextmanager
def database(dsn: str, reuse: str | None, keep: bool) -> Iterator[str]:
    if reuse is not None:
        yield reuse
        return
    with bench_database(dsn, "structure", keep=keep) as created:
        yield created


def versus_control(m: dict[str, Any], control: dict[str, Any]) -> str:
    i = paired_interval([1 / r for r in m["ranks"]], [1 / r for r in control["ranks"]])
    verdict = "beats" if i.above_zero else "worse" if i.below_zero else "n.s."
    return f"{i.mean:+.4f} [{i.low:+.4f}, {i.high:+.4f}] {verdict}"


def significantly_lower(m: dict[str, Any], base: dict[str, Any]) -> bool:
    """Is ``m``'s MRR significantly below ``base``'s (paired over questions)?"""
    i = paired_interval([1 / r for r in m["ranks"]], [1 / r for r in base["ranks"]])
    return i.below_zero


def mean_interval(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float, float]:
    """The MRR difference averaged over corpora (each pair: a variant and its base on
    one corpus) and its 95 % interval, (mean, low, high): a bootstrap resampling each
    corpus's questions apart (paired), then averaging the corpora's mean differences."""
    rng = np.random.default_rng(SEED)
    diffs = [np.array([1 / r for r in a["ranks"]]) - [1 / r for r in b["ranks"]] for a, b in pairs]
    boots = np.mean(
        [d[rng.integers(0, len(d), size=(RESAMPLES, len(d)))].mean(axis=1) for d in diffs], axis=0
    )
    low, high = np.percentile(boots, [2.5, 97.5])
    return float(np.mean([d.mean() for d in diffs])), float(low), float(high)


def mean_difference(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """:func:`mean_interval`, written out."""
    mean, low, high = mean_interval(pairs)
    return f"{mean:+.4f} [{low:+.4f}, {high:+.4f}]"


def measured(m: dict[str, Any]) -> str:
    return " / ".join(f"{m[k]:.4f}" for k in MEASURES)


def main() -> None:
    p = base_parser("choose structure_bm25's constants on the development corpora")
    p.add_argument("--docproxy", type=Path, default=None, help="a built docproxy BEIR dir")
    p.add_argument("--history", type=Path, action="append", default=[], help="history corpus")
    p.add_argument("--reuse", default=None, help="an existing migrated database's DSN")
    p.add_argument("--check", type=Path, action="append", default=[], help="a check corpus")
    args = p.parse_args()
    corpora = {**development_corpora(args.docproxy), **{h.name: h for h in args.history}}
    with_tests = [
        c for c, path in corpora.items() if path in args.history and not c.endswith("-notests")
    ]
    structure = [c for c in corpora if c not in with_tests]
    grid = [variant(i, n, 1.0, 1.0) for i in W_IDENT for n in W_NAME]
    results: dict[str, Any] = {}
    with database(args.dsn, args.reuse, args.keep) as dsn:
        for c in structure:
            results[c] = evaluate(dsn, corpora[c], grid)
            print(c, {g: round(results[c][g]["mrr"], 4) for g in grid}, flush=True)
        mean = {g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in grid}
        best = max(grid, key=lambda g: (mean[g], -grid.index(g)))
        chosen = get_policy(best).combiner
        assert isinstance(chosen, Structure)
        priors = [
            variant(chosen.w_ident, chosen.w_name, t, e)
            for t in TEST_PRIORS
            for e in EXAMPLE_PRIORS
        ]
        for c in with_tests:
            results[c] = evaluate(dsn, corpora[c], priors)
            print(c, {q: round(results[c][q]["mrr"], 4) for q in priors}, flush=True)
        prior_mean = {
            q: sum(results[c][q]["mrr"] for c in with_tests) / max(1, len(with_tests))
            for q in priors
        }
        top = max(prior_mean.values(), default=0.0)
        best_prior = next((q for q in priors if prior_mean[q] >= top - 0.001), priors[0])
        kept = get_policy(best_prior).combiner
        assert isinstance(kept, Structure)
        t, e = (kept.test_prior, kept.example_prior) if with_tests else (1.0, 1.0)
        matches = [variant(chosen.w_ident, chosen.w_name, t, e, m) for m in NAME_MATCHES]
        for c in structure:
            results[c].update(evaluate(dsn, corpora[c], matches))
            print(c, {g: round(results[c][g]["mrr"], 4) for g in matches}, flush=True)
        m_mean = {g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in matches}
        matched = get_policy(max(matches, key=lambda g: (m_mean[g], -matches.index(g)))).combiner
        assert isinstance(matched, Structure)
        m = matched.name_match
        lengths = [variant(chosen.w_ident, chosen.w_name, t, e, m, x) for x in LENGTH_PRIORS]
        for c in corpora:
            results[c].update(evaluate(dsn, corpora[c], lengths))
            print(c, {g: round(results[c][g]["mrr"], 4) for g in lengths}, flush=True)
        checks = {h.name: evaluate(dsn, h, [lengths[0]]) for h in args.check}
    length_mean = {
        g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in lengths
    }
    safe = [
        g
        for g in lengths
        if not any(significantly_lower(results[c][g], results[c][lengths[0]]) for c in corpora)
    ]
    best_length = max(safe, key=lambda g: (length_mean[g], -lengths.index(g)))
    match_mean = {g: sum(results[c][g]["mrr"] for c in structure) / len(structure) for g in matches}
    best_match = max(matches, key=lambda g: (match_mean[g], -matches.index(g)))
    print("step 1, mean MRR over " + ", ".join(structure) + ":")
    for g in sorted(grid, key=lambda g: -mean[g])[:15]:
        print(f"  {g}: {mean[g]:.4f}")
    print(f"chosen: {best}")
    if with_tests:
        print("step 2, mean MRR over " + ", ".join(with_tests) + ":")
        for q in priors:
            print(f"  {q}: {prior_mean[q]:.4f}")
        print(f"chosen: {best_prior}")
    print("step 3, name match (weights and priors kept), mean MRR over the structure corpora:")
    for g in matches:
        print(f"  {g}: {match_mean[g]:.4f}")
    print(f"chosen: {best_match}")
    print("step 4, length prior (the rest kept), by corpus (*: significantly below 0):")
    for g in lengths:
        low = [c for c in corpora if significantly_lower(results[c][g], results[c][lengths[0]])]
        over = mean_difference([(results[c][g], results[c][lengths[0]]) for c in structure])
        print(
            f"  {g}: mean {length_mean[g]:.4f}, difference {over}", " ".join(f"{c}*" for c in low)
        )
    print(f"chosen: {best_length}")
    if checks:
        print(
            "\n| check corpus | control | without: R@1 / R@10 / MRR | with: R@1 / R@10 / MRR "
            "| with − without [95 %] | with − control [95 %] |"
        )
        print("|---|---|---|---|---|---|")
        for c, r in checks.items():
            without, ship, control = r[lengths[0]], r[STRUCTURE_BM25], r[CONTROL]
            print(
                f"| {c} | {measured(control)} | {measured(without)} | {measured(ship)} "
                f"| {versus_control(ship, without)} | {versus_control(ship, control)} |"
            )
    print("\n| corpus | policy | Recall@1 | Recall@10 | MRR | MRR − control [95 % interval] |")
    print("|---|---|---:|---:|---:|---|")
    for c in corpora:
        control = results[c][CONTROL]
        for policy in SHIPPED:
            m = results[c][policy]
            cells = " | ".join(f"{m[k]:.4f}" for k in MEASURES)
            print(f"| {c} | `{policy}` | {cells} | {versus_control(m, control)} |")
    kept = {
        c: results[c][STRUCTURE_BM25]["mrr"] / results[f"{c}-notests"][STRUCTURE_BM25]["mrr"]
        for c in with_tests
        if f"{c}-notests" in results
    }
    if kept:
        mean_with = sum(results[c][STRUCTURE_BM25]["mrr"] for c in kept) / len(kept)
        mean_without = sum(results[f"{c}-notests"][STRUCTURE_BM25]["mrr"] for c in kept) / len(kept)
        print("\nstructure_bm25 keeps, with tests, of its no-tests MRR:")
        for c, share in kept.items():
            print(f"  {c}: {share:.1%}")
        print(f"  mean of the corpora's MRRs: {mean_with / mean_without:.1%}")
    out = args.out or OUT_DIR / "structure.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "results": results,
                "step1": mean,
                "best": best,
                "step3": match_mean,
                "best_match": best_match,
                "step2": prior_mean,
                "best_prior": best_prior,
                "step4": length_mean,
                "best_length": best_length,
                "checks": checks,
            },
            indent=2,
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
