"""Human tables on stdout (``--format table``, ``snapshots list``, ``eval``).

Ids are never cut: the id column is as wide as its longest id and never wraps; other
columns give way. When stdout is not a terminal the table is as wide as it needs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from riido_pg.words import count

if TYPE_CHECKING:
    from riido_pg.evaluation import Evaluation
    from riido_pg.ranking import Ranking
    from riido_pg.shards import PlacedSnapshot, ShardInfo

__all__ = ["print_evaluation", "print_ranking", "print_shards", "print_snapshots"]


def _console(table: Table) -> Console:
    """A console on stdout: the terminal's width, or on a pipe the table's own width."""
    if sys.stdout.isatty():
        return Console(soft_wrap=True)
    probe = Console(width=10_000, file=sys.stdout)
    width = probe.measure(table).maximum
    return Console(soft_wrap=True, width=max(width, 20))


def _id_column(table: Table, name: str, ids: Sequence[str]) -> None:
    table.add_column(name, no_wrap=True, min_width=max((len(i) for i in ids), default=2))


def print_ranking(ranking: Ranking, *, more_hint: bool) -> None:
    table = Table(title=escape(f"{ranking.snapshot_id} · {ranking.policy} · {ranking.status}"))
    table.add_column("rank", justify="right")
    _id_column(table, "id", [c.id for c in ranking.candidates])
    table.add_column("bm25_score", justify="right")
    with_ident = any(c.identifier_bm25_score is not None for c in ranking.candidates)
    if with_ident:
        table.add_column("identifier_bm25_score", justify="right")
    for c in ranking.candidates:
        row: list[str | Text] = [str(c.rank), Text(c.id), f"{c.bm25_score:.6f}"]
        if with_ident:
            row.append(f"{c.identifier_bm25_score or 0.0:.6f}")
        table.add_row(*row)
    more = ranking.total - len(ranking.candidates)
    if more > 0 and more_hint:
        table.caption = (
            f"{count(more, 'more candidate')} not shown; --limit K shows the first K, "
            "--format json every one"
        )
    _console(table).print(table)


def print_snapshots(snaps: Sequence[PlacedSnapshot]) -> None:
    """The snapshots table; a shard column when any snapshot is on a shard."""
    table = Table()
    _id_column(table, "id", [p.snapshot.snapshot_id for p in snaps])
    sharded = any(p.shard is not None for p in snaps)
    for name in ("documents", "text config", "state", "created", *(("shard",) if sharded else ())):
        table.add_column(name, justify="right" if name == "documents" else "left")
    for p in snaps:
        s = p.snapshot
        table.add_row(
            Text(s.snapshot_id),
            str(s.documents),
            s.text_config,
            s.state,
            s.created_at.isoformat(timespec="seconds"),
            *((p.shard or "(coordinator)",) if sharded else ()),
        )
    _console(table).print(table)


def print_shards(shards: Sequence[ShardInfo]) -> None:
    table = Table()
    _id_column(table, "shard", [s.name for s in shards])
    for name in ("host", "port", "database", "snapshots", "documents", "bytes"):
        table.add_column(
            name, justify="right" if name in ("snapshots", "documents", "bytes") else "left"
        )
    for s in shards:
        counts = (s.snapshots, s.documents, s.bytes)
        table.add_row(
            Text(s.name),
            s.host,
            s.port,
            s.dbname,
            *(("unreachable", "-", "-") if s.snapshots is None else (str(c) for c in counts)),
        )
    _console(table).print(table)


def _measures(m: dict[str, float]) -> list[str]:
    return [
        f"{m['recall@1']:.4f}",
        f"{m['recall@10']:.4f}",
        f"{m['mrr']:.4f}",
        f"{m['mean_first_target_rank']:.2f}",
    ]


def print_evaluation(result: Evaluation) -> None:
    from riido_pg.ranking.policies import BM25

    data = result.to_dict()
    corpus = data["corpus"]
    title = (
        f"{corpus['snapshot_id']} · {count(corpus['documents'], 'document')} · "
        f"{count(corpus['questions'], 'question')}"
    )
    notes = []
    if corpus["skipped_questions"]:
        notes.append(f"{corpus['skipped_questions']} without targets skipped")
    if corpus["identifier_out_of_scope"]:
        notes.append(f"{corpus['identifier_out_of_scope']} outside identifier limits (ran bm25)")
    config = data["config"]
    caption = (
        f"text config {config['text_config']}, PostgreSQL {config['postgresql_major']}; "
        "ranks of the first target over every document; improved/worsened/unchanged: "
        "per question, versus bm25"
    )
    if notes:
        caption += "; " + "; ".join(notes)
    table = Table(title=title, caption=caption)
    table.add_column("policy", no_wrap=True)
    for name in ("recall@1", "recall@10", "mrr", "mean rank", "improved", "worsened", "unchanged"):
        table.add_column(name, justify="right")
    versus = data["versus_baseline"]
    for p in result.policies:
        counts = versus.get(p)
        table.add_row(
            p,
            *_measures(data["policies"][p]),
            *(
                [str(counts[k]) for k in ("improved", "worsened", "unchanged")]
                if counts is not None
                else (["-"] * 3 if p == BM25 else [""] * 3)
            ),
        )
    # Wide enough for the policy names when stdout is a file or a pipe.
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 120)
    console.print(table)
    costs = data.get("cost")
    if costs:
        peak = costs["process"]["peak_rss_mb"]
        cost_table = Table(title=f"cost, measured in this run (peak memory {peak:.0f} MiB)")
        for name in ("policy", "ms per question", "extra load s", "extra bytes stored"):
            cost_table.add_column(name, justify="left" if name == "policy" else "right")
        for p in result.policies:
            c = costs[p]
            cost_table.add_row(
                p,
                f"{c['ms_per_question']:.3f}",
                f"{c['load_seconds']:.2f}",
                f"{int(c['stored_bytes']):,}",
            )
        console.print(cost_table)
    for p, v in data.get("verdicts", {}).items():
        word = "beats" if v["beats_control"] else "does not beat"
        console.print(
            f"verdict: {p} {word} the control identifier_bm25_baseline_first on this corpus "
            f"(MRR {v['mrr_minus_control']:+.4f}, Recall@10 "
            f"{v['recall@10_minus_control']:+.4f} vs the control; Recall@1 "
            f"{v['recall@1_minus_bm25']:+.4f} vs bm25)",
            markup=False,
            highlight=False,
        )
    per_repo = data["per_repo"]
    if len(per_repo) > 1:
        repo_table = Table(title="per repository")
        repo_table.add_column("repo")
        repo_table.add_column("questions", justify="right")
        repo_table.add_column("policy", no_wrap=True)
        for name in ("recall@1", "recall@10", "mrr", "mean rank"):
            repo_table.add_column(name, justify="right")
        counts_by_repo = {repo: len(rs) for repo, rs in result.repos().items()}
        last = len(result.policies) - 1
        for repo in sorted(per_repo):
            for i, p in enumerate(result.policies):
                repo_table.add_row(
                    repo if i == 0 else "",
                    str(counts_by_repo[repo]) if i == 0 else "",
                    p,
                    *_measures(per_repo[repo][p]),
                    end_section=i == last,
                )
        console.print(repo_table)
