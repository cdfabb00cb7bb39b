"""Two evaluations of one history corpus compared question by question, from their run
files: Recall@1 / Recall@10 / MRR of each policy before and after, and the paired
bootstrap interval of the MRR difference (:mod:`riido_pg.evaluation.significance`)
over the questions both ask (docs/evaluation.md "Rust tests inside source files").

The two sides may be different builds of the corpus (one version of riido-pg each):
each side's question is judged against its own qrels, and a question only one side
asks (a commit whose only targets one version calls tests) is left out of the pairs
and counted. Each run directory is ``riido-pg eval DIR --run-dir RUNDIR``'s, holding
``<policy>.trec`` ranked over the whole snapshot (the default run depth).

    python bench/run_pairs.py --before CORPUS RUNDIR --after CORPUS RUNDIR \\
        [--policy P]... [--label NAME]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from common import REPO  # noqa: F401  (puts the checkout on sys.path)

from riido_pg.evaluation.significance import paired_interval

POLICIES = ("structure_bm25", "identifier_bm25_baseline_first")


def qrels(corpus: Path) -> dict[str, set[str]]:
    """Each question's targets."""
    targets: dict[str, set[str]] = defaultdict(set)
    for line in (corpus / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        question, doc_id, _ = line.split("\t")
        targets[question].add(doc_id)
    return targets


def first_ranks(run: Path, targets: dict[str, set[str]]) -> dict[str, int | None]:
    """The rank of each question's first target in a run file (None: not ranked)."""
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in run.read_text().splitlines():
        question, _, doc_id, rank, _, _ = line.split()
        ranked[question].append((int(rank), doc_id))
    return {
        q: next((r for r, d in sorted(ranked[q]) if d in wanted), None)
        for q, wanted in targets.items()
    }


def reciprocal(rank: int | None) -> float:
    return 1 / rank if rank else 0.0


def measures(ranks: list[int | None]) -> str:
    n = len(ranks)
    at1 = sum(r == 1 for r in ranks) / n
    at10 = sum(r is not None and r <= 10 for r in ranks) / n
    mrr = sum(reciprocal(r) for r in ranks) / n
    return f"{at1:.4f} / {at10:.4f} / {mrr:.4f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", nargs=2, type=Path, required=True, metavar=("CORPUS", "RUNDIR"))
    p.add_argument("--after", nargs=2, type=Path, required=True, metavar=("CORPUS", "RUNDIR"))
    p.add_argument("--policy", action="append", default=[], help="default: both of POLICIES")
    p.add_argument("--label", default=None, help="the corpus's name in the table")
    args = p.parse_args()
    label = args.label or args.before[0].name
    before, after = qrels(args.before[0]), qrels(args.after[0])
    common = sorted(set(before) & set(after))
    other = sum(before[q] != after[q] for q in common)
    print(
        f"{label}: {len(common)} questions in both ({len(before)} before, {len(after)} "
        f"after; {other} with other targets after)"
    )
    print(
        "| corpus | policy | before R@1 / R@10 / MRR | after | after − before [95 %] |"
        " better / worse |"
    )
    print("|---|---|---|---|---|---|")
    for policy in args.policy or POLICIES:
        b = first_ranks(args.before[1] / f"{policy}.trec", before)
        a = first_ranks(args.after[1] / f"{policy}.trec", after)
        rb = [reciprocal(b[q]) for q in common]
        ra = [reciprocal(a[q]) for q in common]
        i = paired_interval(ra, rb)
        better = sum(x > y for x, y in zip(ra, rb, strict=True))
        worse = sum(x < y for x, y in zip(ra, rb, strict=True))
        print(
            f"| {label} | `{policy}` | {measures([b[q] for q in common])} | "
            f"{measures([a[q] for q in common])} | {i.mean:+.4f} [{i.low:+.4f}, {i.high:+.4f}] "
            f"| {better} / {worse} |"
        )
        print(
            f"|  | (each side's whole corpus) | {measures(list(b.values()))} | "
            f"{measures(list(a.values()))} | | |"
        )


if __name__ == "__main__":
    main()
