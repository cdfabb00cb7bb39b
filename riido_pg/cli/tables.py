"""Human tables on stdout (``--format table``, ``snapshots list``, ``eval``).

Numbers never disappear: number columns are as wide as their widest value and never
wrap; on a narrow terminal an id wraps (a long one folds) instead. When stdout is not
a terminal the table is as wide as it needs, so ids are whole. Names come from
untrusted trees: control characters in them are shown as escapes
(:func:`riido_pg.quoting.visible`), and rich markup in them is printed as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from riido_pg.quoting import visible
from riido_pg.words import count

if TYPE_CHECKING:
    from riido_pg.evaluation import Evaluation
    from riido_pg.ranking import Ranking
    from riido_pg.shards import PlacedSnapshot, ShardInfo

__all__ = ["print_evaluation", "print_ranking", "print_shards", "print_snapshots"]

#: Keys of a candidate that are not scores.
_NOT_SCORES = ("id", "rank")


def _console(table: Table) -> Console:
    """A console on stdout: the terminal's width (or, on a terminal narrower than the
    table can be, the table's narrowest: the terminal wraps its lines, nothing is
    cut), or on a pipe the table's own width."""
    if sys.stdout.isatty():
        terminal = Console()
        # rich narrows only columns without a fixed width (names); each column takes
        # its width (a name at least 4), a space either side and a border
        narrowest = sum((c.width or 4) + 3 for c in table.columns) + 1
        return terminal if terminal.width >= narrowest else Console(width=narrowest)
    for column in table.columns:  # as wide as each needs, headers whole
        column.width = None
    probe = Console(width=10_000, file=sys.stdout)
    return Console(width=max(probe.measure(table).maximum, 20))


def _text(value: str) -> Text:
    """A cell of untrusted text: control characters escaped, no markup."""
    return Text(visible(value))


def _id_column(table: Table, name: str) -> None:
    """The column of names: it wraps, and folds a name longer than its width."""
    table.add_column(name, overflow="fold")


def _number_column(table: Table, name: str, cells: Sequence[str]) -> None:
    """A column of numbers: as wide as the widest number, so none is wrapped or cut
    (a long header folds instead)."""
    width = max([4, *(len(c) for c in cells)])
    table.add_column(name, justify="right", overflow="fold", width=width)


def print_ranking(ranking: Ranking, *, more_hint: bool) -> None:
    """The ranking: rank, id, and every score the candidates carry (``bm25_score``, and
    whichever other score the policy adds and ranks by)."""
    rows = [c.to_dict() for c in ranking.candidates]
    scores = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in _NOT_SCORES]
    title = f"{ranking.snapshot_id} · {ranking.policy} · {ranking.status}"
    table = Table(title=_text(title))
    ranks = [str(r["rank"]) for r in rows]
    cells = {k: [f"{r[k]:.6f}" if k in r else "" for r in rows] for k in scores}
    _number_column(table, "rank", ranks)
    _id_column(table, "id")
    for key in scores:
        _number_column(table, key, cells[key])
    for i, r in enumerate(rows):
        table.add_row(ranks[i], _text(r["id"]), *(cells[k][i] for k in scores))
    more = ranking.total - len(ranking.candidates)
    if more > 0 and more_hint:
        table.caption = (
            f"{count(more, 'more candidate')} not shown; --limit N shows the first N, "
            "--all every one"
        )
    _console(table).print(table)


def print_snapshots(snaps: Sequence[PlacedSnapshot]) -> None:
    """The snapshots table; a base column and the difference's size (documents added /
    removed) when any snapshot is on a base, a shard column when any is on a shard."""
    table = Table()
    _id_column(table, "id")
    _number_column(table, "documents", [str(p.snapshot.documents) for p in snaps])
    sharded = any(p.shard is not None for p in snaps)
    based = any(p.snapshot.base is not None for p in snaps)
    names = ("text config", "state", "created", *(("base", "+ / −") if based else ()))
    for name in (*names, *(("shard",) if sharded else ())):
        table.add_column(name, no_wrap=name in ("created", "+ / −"))
    for p in snaps:
        s = p.snapshot
        on_base = (_text(s.base), f"+{s.added} / −{s.removed}") if s.base is not None else ("", "")
        table.add_row(
            _text(s.snapshot_id),
            str(s.documents),
            _text(s.text_config),
            _text(s.state),
            s.created_at.isoformat(timespec="seconds"),
            *(on_base if based else ()),
            *((_text(p.shard or "(coordinator)"),) if sharded else ()),
        )
    _console(table).print(table)


def print_shards(shards: Sequence[ShardInfo]) -> None:
    table = Table()
    _id_column(table, "shard")
    for name in ("host", "port", "database"):
        table.add_column(name)
    for name in ("snapshots", "documents", "bytes"):
        table.add_column(name, justify="right", no_wrap=True)
    for s in shards:
        counts = (s.snapshots, s.documents, s.bytes)
        table.add_row(
            _text(s.name),
            _text(s.host),
            _text(s.port),
            _text(s.dbname),
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
    if "snapshot_id" in corpus:
        where = f"{corpus['snapshot_id']} · {count(corpus['documents'], 'document')}"
    else:  # history corpora: a snapshot per question
        repos = ", ".join(c["repository"] for c in corpus["corpora"])
        where = f"history of {repos} · {count(corpus['snapshots'], 'snapshot')}"
    title = f"{where} · {count(corpus['questions'], 'question')}"
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
    table = Table(title=_text(title), caption=caption)
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
    console = Console(width=None if sys.stdout.isatty() else 120)
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
                    _text(repo) if i == 0 else "",
                    str(counts_by_repo[repo]) if i == 0 else "",
                    p,
                    *_measures(per_repo[repo][p]),
                    end_section=i == last,
                )
        console.print(repo_table)
