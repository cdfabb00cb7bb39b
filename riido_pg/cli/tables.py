"""Human tables on stdout (``--format table``, ``snapshots list``, ``eval``).

A ranking's ids are what people copy: its table is plain text, the id last and never
folded (:func:`ranking_lines`). In the other tables numbers never disappear: number
columns are as wide as their widest value and never wrap; on a narrow terminal a name
wraps (a long one folds) instead. When stdout is not
a terminal the table is as wide as it needs, so ids are whole. Names come from
untrusted trees: control characters in them are shown as escapes
(:func:`riido_pg.quoting.visible`), and rich markup in them is printed as it is.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from riido_pg.api import count, visible

if TYPE_CHECKING:
    from riido_pg.api import Evaluation, PlacedSnapshot, Ranking, ShardInfo

__all__ = [
    "print_evaluation",
    "print_ranking",
    "print_shards",
    "print_snapshots",
    "ranking_lines",
]

#: Keys of a candidate that are not scores.
_NOT_SCORES = ("id", "rank")


def _console(table: Table) -> Console:
    """A console on stdout: the terminal's width (or, on a terminal narrower than the
    table can be, the table's narrowest: the terminal wraps its lines, nothing is
    cut), or on a pipe the table's own width."""
    if sys.stdout.isatty():
        terminal = Console()
        # rich narrows only columns without a fixed width (names); each column takes
        # its width (a name at least its minimum), a space either side and a border
        narrowest = sum((c.width or c.min_width or 4) + 3 for c in table.columns) + 1
        return terminal if terminal.width >= narrowest else Console(width=narrowest)
    for column in table.columns:  # as wide as each needs, headers whole
        column.width = None
    probe = Console(width=10_000, file=sys.stdout)
    return Console(width=max(probe.measure(table).maximum, 20))


def _text(value: str) -> Text:
    """A cell of untrusted text: control characters escaped, no markup."""
    return Text(visible(value))


#: A header word up to this long keeps a column of short values as wide as the word.
_HEADER_WORD = 10


def _id_column(table: Table, name: str, cells: Sequence[str] = ()) -> None:
    """The column of names (snapshot ids, bases, shards: what users copy): as wide as
    its widest name, so no name is ever folded; a table wider than the terminal is
    printed at its own width and the terminal wraps its lines (:func:`_console`)."""
    widest = max([len(name), *(len(visible(c)) for c in cells)])
    table.add_column(name, no_wrap=True, min_width=widest)


def _whole_column(
    table: Table, name: str, cells: Sequence[str], justify: JustifyMethod = "left"
) -> None:
    """A column of short values (numbers, states, dates): as wide as the widest value,
    so none is wrapped or cut, and as its header's longest word up to
    :data:`_HEADER_WORD` characters (a longer header folds)."""
    word = min(max(len(w) for w in name.split()), _HEADER_WORD)
    width = max([4, word, *(len(c) for c in cells)])
    table.add_column(name, justify=justify, overflow="fold", width=width)


def _number_column(table: Table, name: str, cells: Sequence[str]) -> None:
    """A column of numbers (see :func:`_whole_column`), right-aligned."""
    _whole_column(table, name, cells, "right")


#: A score's column header in the ranking table: short, so the row stays narrow and
#: every header is whole (the JSON keeps the long names).
_SCORE_HEADERS = {"bm25_score": "bm25", "identifier_bm25_score": "ident bm25"}
#: The gap between two columns of the ranking table.
_GAP = "  "


def _wrapped(text: str, width: int | None) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken only at spaces (a word
    longer than that, e.g. a snapshot id, is one line of its own); None: one line."""
    if width is None:
        return [text]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def _score_header(key: str) -> str:
    return _SCORE_HEADERS.get(key, key.removesuffix("_score"))


def ranking_lines(ranking: Ranking, *, width: int | None, more_hint: bool) -> list[str]:
    """The ranking table as lines of text: rank, every score the candidates carry
    (``bm25_score``, and whichever other score the policy adds and ranks by), then the
    id, last and never folded or cut. On a terminal ``width`` columns wide where some
    row would be longer, each id goes on a line of its own below its row's numbers
    (an id longer than the terminal is still one line, which the terminal wraps).
    ``width`` None: a pipe, every row on one line."""
    rows = [c.to_dict() for c in ranking.candidates]
    scores = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in _NOT_SCORES]
    cells = [[str(r["rank"]), *(f"{r[k]:.6f}" if k in r else "" for k in scores)] for r in rows]
    headers = ["rank", *(_score_header(k) for k in scores)]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return _GAP.join(v.rjust(w) for v, w in zip(values, widths, strict=True))

    ids = [visible(r["id"]) for r in rows]
    numbers = len(line(headers))
    own_line = width is not None and any(numbers + len(_GAP) + len(i) > width for i in [*ids, "id"])
    out = _wrapped(visible(f"{ranking.snapshot_id} · {ranking.policy} · {ranking.status}"), width)
    if own_line:
        out += [line(headers), _GAP + "id"]
    else:
        out.append(line(headers) + _GAP + "id")
    for values, name in zip(cells, ids, strict=True):
        out += [line(values), _GAP + name] if own_line else [line(values) + _GAP + name]
    more = ranking.total - len(ranking.candidates)
    if more > 0 and more_hint:
        out += _wrapped(
            f"{count(more, 'more candidate')} not shown; --limit N shows the first N, "
            "--all every one",
            width,
        )
    return out


def print_ranking(ranking: Ranking, *, more_hint: bool) -> None:
    """:func:`ranking_lines` on stdout, as wide as the terminal (a pipe: unbounded)."""
    width = Console().width if sys.stdout.isatty() else None
    sys.stdout.write(
        "".join(f"{text}\n" for text in ranking_lines(ranking, width=width, more_hint=more_hint))
    )


def print_snapshots(snaps: Sequence[PlacedSnapshot]) -> None:
    """The snapshots table; a base column and the difference's size (documents added /
    removed) when any snapshot is on a base, a shard column when any is on a shard."""
    sharded = any(p.shard is not None for p in snaps)
    based = any(p.snapshot.base is not None for p in snaps)
    rows = []
    for p in snaps:
        s = p.snapshot
        on_base = (s.base, f"+{s.added} / −{s.removed}") if s.base is not None else ("", "")
        rows.append(
            (
                s.snapshot_id,
                str(s.documents),
                s.text_config,
                s.state,
                s.created_at.isoformat(timespec="seconds"),
                *(on_base if based else ()),
                *((p.shard or "(coordinator)",) if sharded else ()),
            )
        )
    columns = ("text config", "state", "created", *(("base", "+ / −") if based else ()))
    names = ("id", "documents", *columns, *(("shard",) if sharded else ()))
    table = Table()
    for i, name in enumerate(names):
        cells = [r[i] for r in rows]
        if name in ("id", "base", "shard"):
            _id_column(table, name, cells)
        elif name == "documents":
            _number_column(table, name, cells)
        else:
            _whole_column(table, name, [visible(c) for c in cells])
    for row in rows:
        table.add_row(*(_text(c) for c in row))
    _console(table).print(table)


def print_shards(shards: Sequence[ShardInfo]) -> None:
    rows = [
        (
            s.name,
            s.host,
            s.port,
            s.dbname,
            *(
                ("unreachable", "-", "-")
                if s.snapshots is None
                else (str(s.snapshots), str(s.documents), str(s.bytes))
            ),
        )
        for s in shards
    ]
    table = Table()
    for i, name in enumerate(("shard", "host", "port", "database")):
        cells = [r[i] for r in rows]
        if name == "port":
            _whole_column(table, name, [visible(c) for c in cells])
        else:
            _id_column(table, name, cells)
    for i, name in enumerate(("snapshots", "documents", "bytes"), 4):
        _number_column(table, name, [r[i] for r in rows])
    for row in rows:
        table.add_row(*(_text(c) for c in row))
    _console(table).print(table)


#: The measures' columns of the evaluation tables.
_MEASURES = ("recall@1", "recall@10", "mrr", "mean rank")


def _columns(table: Table, names: Sequence[str], rows: Sequence[Sequence[str]], named: int) -> None:
    """Columns of ``table`` for ``rows``: the first ``named`` are names (they fold),
    the others numbers (whole). ``rows`` are added by the caller."""
    for i, name in enumerate(names):
        cells = [r[i] for r in rows]
        if i < named:
            _id_column(table, name, cells)
        else:
            _number_column(table, name, cells)


def _measures(m: dict[str, float]) -> list[str]:
    return [
        f"{m['recall@1']:.4f}",
        f"{m['recall@10']:.4f}",
        f"{m['mrr']:.4f}",
        f"{m['mean_first_target_rank']:.2f}",
    ]


def print_evaluation(result: Evaluation) -> None:
    from riido_pg.api import BM25

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
    versus = data["versus_baseline"]
    rows = []
    for p in result.policies:
        counts = versus.get(p)
        rows.append(
            (
                p,
                *_measures(data["policies"][p]),
                *(
                    [str(counts[k]) for k in ("improved", "worsened", "unchanged")]
                    if counts is not None
                    else (["-"] * 3 if p == BM25 else [""] * 3)
                ),
            )
        )
    table = Table(title=_text(title), caption=caption)
    _columns(table, ("policy", *_MEASURES, "improved", "worsened", "unchanged"), rows, 1)
    for row in rows:
        table.add_row(_text(row[0]), *row[1:])
    _console(table).print(table)
    # Wide enough for the verdicts' policy names when stdout is a file or a pipe.
    console = Console(width=None if sys.stdout.isatty() else 120)
    costs = data.get("cost")
    if costs:
        peak = costs["process"]["peak_rss_mb"]
        cost_table = Table(title=f"cost, measured in this run (peak memory {peak:.0f} MiB)")
        cost_rows = [
            (
                p,
                f"{costs[p]['ms_per_question']:.3f}",
                f"{costs[p]['load_seconds']:.2f}",
                f"{int(costs[p]['stored_bytes']):,}",
                _embedded(costs[p]),
            )
            for p in result.policies
        ]
        names = (
            "policy",
            "ms per question",
            "extra load s",
            "extra bytes stored",
            "texts embedded / documents",
        )
        _columns(cost_table, names, cost_rows, 1)
        for row in cost_rows:
            cost_table.add_row(_text(row[0]), *row[1:])
        _console(cost_table).print(cost_table)
    _print_inspection(result, data)
    verdicts = data.get("verdicts", {})
    if verdicts:  # one line each, whatever the width (soft wrap: the terminal's)
        console.print(_CONTROL_NOTE, markup=False, highlight=False, soft_wrap=True)
    for p, v in verdicts.items():
        console.print(_verdict(p, v), markup=False, highlight=False, soft_wrap=True)
    per_repo = data["per_repo"]
    if len(per_repo) > 1:
        _print_per_repo(result, per_repo)


#: What "the control" is, printed above the verdicts.
_CONTROL_NOTE = (
    "the control: identifier_bm25_baseline_first (bm25's ranking interleaved with "
    "identifier_bm25's, bm25's first), the non-learned policy every challenger must "
    "beat; a verdict compares them question by question (95% paired bootstrap "
    "interval of the difference)"
)
_VERDICT_WORDS = {
    "beats": "beats the control",
    "worse": "is worse than the control",
    "no significant difference": "shows no significant difference from the control",
}


def _verdict(policy: str, v: dict[str, Any]) -> str:
    mrr, r10 = v["mrr_minus_control_interval"], v["recall@10_minus_control_interval"]
    return (
        f"verdict: {policy} {_VERDICT_WORDS[v['verdict']]} on this corpus "
        f"(MRR {v['mrr_minus_control']:+.4f} [{mrr[0]:+.4f}, {mrr[1]:+.4f}], Recall@10 "
        f"{v['recall@10_minus_control']:+.4f} [{r10[0]:+.4f}, {r10[1]:+.4f}] vs the "
        f"control; Recall@1 {v['recall@1_minus_bm25']:+.4f} vs bm25)"
    )


def _embedded(cost: dict[str, float]) -> str:
    """``1,415 / 57,981 (108 snapshots)``: the texts a model policy's embedding
    computed against the documents it serves; empty for other policies."""
    if "embedded_texts" not in cost:
        return ""
    snapshots = int(cost["embedded_snapshots"])
    return f"{int(cost['embedded_texts']):,} / {int(cost['embedded_documents']):,}" + (
        f" ({snapshots:,} snapshots)" if snapshots > 1 else ""
    )


def _print_inspection(result: Evaluation, data: dict[str, Any]) -> None:
    """What a reader reads before the first target, per policy (when measured)."""
    measured = [p for p in result.policies if "inspected_tokens_mean" in data["policies"][p]]
    if not measured:
        return
    rows = [
        (
            p,
            *(
                f"{data['policies'][p][k]:,.0f}"
                for k in (
                    "inspected_tokens_mean",
                    "inspected_tokens_median",
                    "inspected_chars_mean",
                    "inspected_chars_median",
                )
            ),
        )
        for p in measured
    ]
    table = Table(
        title="read before the first target",
        caption="the candidates ranked above it, per question; tokens: ceil(characters / 4) "
        "per candidate",
    )
    names = ("policy", "tokens mean", "tokens median", "chars mean", "chars median")
    _columns(table, names, rows, 1)
    for row in rows:
        table.add_row(_text(row[0]), *row[1:])
    _console(table).print(table)


def _print_per_repo(result: Evaluation, per_repo: dict[str, Any]) -> None:
    """The measures per repository (history corpora of several)."""
    counts_by_repo = {repo: len(rs) for repo, rs in result.repos().items()}
    repo_rows = [
        (
            repo if i == 0 else "",
            str(counts_by_repo[repo]) if i == 0 else "",
            p,
            *_measures(per_repo[repo][p]),
            f"{per_repo[repo][p].get('inspected_tokens_mean', 0):,.0f}",
        )
        for repo in sorted(per_repo)
        for i, p in enumerate(result.policies)
    ]
    repo_table = Table(title="per repository")
    names = ("repo", "questions", "policy", *_MEASURES, "tokens read")
    _columns(repo_table, names, repo_rows, 3)
    last = len(result.policies) - 1
    for n, row in enumerate(repo_rows):
        repo_table.add_row(_text(row[0]), *row[1:], end_section=n % len(result.policies) == last)
    _console(repo_table).print(repo_table)
