"""Tables for people: numbers never disappear on a narrow terminal, every score the
policy carries is shown, untrusted names never drive the terminal, and ``query`` on a
terminal shows the first 10 as a table."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import run_on_terminal
from support.corpus import small
from support.database import Database

from riido_pg import Document, load_snapshot
from riido_pg.cli.tables import (
    print_evaluation,
    print_ranking,
    print_shards,
    print_snapshots,
    ranking_lines,
)
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.quoting import visible
from riido_pg.ranking import Candidate, Ranking
from riido_pg.shards import PlacedSnapshot, ShardInfo
from riido_pg.storage import Snapshot

HOSTILE = "x\x1b]0;PWNED\x07\x1b[31mred\x1b[0m.py:f:1"
LONG = "pkg/very/deeply/nested/module/path/with/a/long/name.py:SomeClass.some_method:123"


def _scores(extra: dict[str, float], scale: float) -> dict[str, Any]:
    """Candidate keywords for extra scores: the identifier column's, or a policy's own
    (``fused_score``, ``rrf_score``: a ``score`` under its ``score_name``)."""
    out: dict[str, Any] = {}
    for key, value in extra.items():
        if key == "identifier_bm25_score":
            out[key] = value * scale
        else:
            out.update(score=value * scale, score_name=key)
    return out


def _ranking(**extra: float) -> Ranking:
    candidates = [
        Candidate(LONG, 1, 12.345678, **_scores(extra, 1)),
        Candidate(HOSTILE, 2, 0.5, **_scores(extra, 0.5)),
        Candidate("new\nline", 3, 0.0, **_scores(extra, 0)),
    ]
    return Ranking("snap\x1b[2J", "identifier_bm25_fused", candidates, total=30)


def _printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any, columns: int | None, ranking: Ranking
) -> str:
    if columns is not None:  # a terminal of that width
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    print_ranking(ranking, more_hint=True)
    return capsys.readouterr().out


FLASK = "src/flask/sessions.py:SessionInterface.get_cookie_name:171"
#: A ranking at any width: the title (wrapped at spaces), the headers, each row's
#: numbers and its id, whole; narrower than a row, each id on a line of its own.
BELOW = """\
rank       bm25  ident bm25
  id
   1  12.345678    3.250000
  src/flask/sessions.py:SessionInterface.get_cookie_name:171
   2   0.500000    1.625000
  pkg/very/deeply/nested/module/path/with/a/long/name.py:SomeClass.some_method:123
   3   0.000000    0.000000
  app.py:run:5
"""
TABLES = {
    40: "flask@07c7d57 ·\nidentifier_bm25_baseline_first ·\nunverified\n"
    + BELOW
    + "27 more candidates not shown; --limit N\nshows the first N, --all every one\n",
    60: "flask@07c7d57 · identifier_bm25_baseline_first · unverified\n"
    + BELOW
    + "27 more candidates not shown; --limit N shows the first N,\n--all every one\n",
    80: "flask@07c7d57 · identifier_bm25_baseline_first · unverified\n"
    + BELOW
    + "27 more candidates not shown; --limit N shows the first N, --all every one\n",
    120: "flask@07c7d57 · identifier_bm25_baseline_first · unverified\n"
    "rank       bm25  ident bm25  id\n"
    f"   1  12.345678    3.250000  {FLASK}\n"
    f"   2   0.500000    1.625000  {LONG}\n"
    "   3   0.000000    0.000000  app.py:run:5\n"
    "27 more candidates not shown; --limit N shows the first N, --all every one\n",
}


@pytest.mark.parametrize("columns", sorted(TABLES))
def test_ids_are_whole_and_last_at_any_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any, columns: int
) -> None:
    """Ids are what people copy: never folded (at 80 columns one was broken in two and
    `identifier_bm25_score` folded in three); the numbers before them stay whole."""
    candidates = [
        Candidate(FLASK, 1, 12.345678, 3.25),
        Candidate(LONG, 2, 0.5, 1.625),
        Candidate("app.py:run:5", 3, 0.0, 0.0),
    ]
    ranking = Ranking("flask@07c7d57", "identifier_bm25_baseline_first", candidates, total=30)
    assert _printed(capsys, monkeypatch, columns, ranking) == TABLES[columns]
    monkeypatch.undo()  # piped: every row on one line
    assert _printed(capsys, monkeypatch, None, ranking) == TABLES[120]


_IDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120)


@given(
    ids=st.lists(_IDS, min_size=1, max_size=5, unique=True),
    extra=st.sampled_from([None, "identifier_bm25_score", "fused_score", "rrf_score"]),
    scale=st.floats(0, 1e6),
    width=st.one_of(st.none(), st.integers(40, 300)),
)
def test_every_id_is_the_end_of_a_line_and_every_header_whole(
    ids: list[str], extra: str | None, scale: float, width: int | None
) -> None:
    candidates = [
        Candidate(i, n, scale / n, **(_scores({extra: scale}, 1 / n) if extra else {}))
        for n, i in enumerate(ids, 1)
    ]
    lines = ranking_lines(Ranking("s", "p", candidates, total=9), width=width, more_hint=True)
    header = next(n for n, text in enumerate(lines) if text.startswith("rank"))
    words = ["rank", "bm25"] + (
        ["ident bm25"] if extra == "identifier_bm25_score" else [extra[:-6]] if extra else []
    )
    assert re.fullmatch(
        r"rank +bm25" + "".join(f" +{w}" for w in words[2:]) + r"(  id)?", lines[header]
    )
    rows = lines[header + (1 if lines[header].endswith("  id") else 2) :]
    for n, i in enumerate(ids):
        numbers = re.escape(str(n + 1)) + r"( +\d+\.\d{6})+"
        whole = visible(i)
        if lines[header].endswith("  id"):  # one line a row, the id last
            assert re.fullmatch(rf" *{numbers}  {re.escape(whole)}", rows[n]), rows[n]
        else:  # the row's numbers, then the id on a line of its own
            assert re.fullmatch(rf" *{numbers}", rows[2 * n]) and rows[2 * n + 1] == f"  {whole}"
            assert width is not None and len(rows[2 * n]) <= width
    if width is not None:
        assert all(len(text) <= width for text in lines if not text.startswith("  "))


@pytest.mark.parametrize("columns", [50, 30, None])
def test_listings_show_every_state_number_and_date_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any, columns: int | None
) -> None:
    """`snapshots list` and `shards list` on a narrow terminal: every name (a snapshot
    id, a base, a shard: what users copy) and every short value (a state, a text
    configuration, a count, a date, a port) is shown whole, on one line."""
    if columns is not None:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    print_snapshots(
        [
            PlacedSnapshot(Snapshot(LONG, 123456, "english", "ready", when, ""), "shard-one"),
            PlacedSnapshot(Snapshot("next", 7, "simple", "loading", when, "", LONG, 3, 1), None),
        ]
    )
    print_shards([ShardInfo("s1", "db.example.com", "5432", "riido", 2, 123456, 9876543)])
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    cells = {c.strip() for line in out.splitlines() for c in re.split(r"[│┃]", line)}
    for value in (
        "123456",
        "english",
        "simple",
        "ready",
        "loading",
        "2026-01-01T00:00:00+00:00",
        "+3 / −1",
        "5432",
        "9876543",
        LONG,
        "shard-one",
        "(coordinator)",
        "s1",
        "db.example.com",
    ):
        assert value in cells, out
    assert "…" not in out, out


def _cells(out: str) -> set[str]:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    return {c.strip() for line in plain.splitlines() for c in re.split(r"[│┃]", line)}


@pytest.mark.parametrize("columns", [60, 100, None])
def test_evaluation_tables_keep_every_measure(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: Any,
    conn: Any,
    tmp_path: Path,
    columns: int | None,
) -> None:
    """`eval` on a narrow terminal: every measure and count of every policy is shown
    whole (they shrank to '…' at 60 columns); policy names fold."""
    stored = store_corpus(conn, small(tmp_path / "small"))
    result = evaluate(conn, stored.snapshot_id)
    if columns is not None:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    print_evaluation(result)
    out = capsys.readouterr().out
    cells = _cells(out)
    data = result.to_dict()
    for policy in result.policies:
        m = data["policies"][policy]
        for value in (f"{m[k]:.4f}" for k in ("recall@1", "recall@10", "mrr")):
            assert value in cells, out
        assert f"{m['mean_first_target_rank']:.2f}" in cells, out
        for k, n in data["versus_baseline"].get(policy, {}).items():
            assert str(n) in cells, (k, out)
    assert "…" not in out, out


@pytest.mark.parametrize("score", ["fused_score", "rrf_score", "identifier_bm25_score"])
def test_the_score_the_policy_adds_is_a_column(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any, score: str
) -> None:
    out = _printed(capsys, monkeypatch, None, _ranking(**{score: 7.0}))
    header = next(line for line in out.splitlines() if line.startswith("rank"))
    short = {"identifier_bm25_score": "ident bm25"}.get(score, score.removesuffix("_score"))
    assert header.split("  ")[-2].strip() == short and "7.000000" in out and "3.500000" in out


def test_control_characters_are_shown_not_sent(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    out = _printed(capsys, monkeypatch, None, _ranking())
    assert "\x1b" not in out and "\x07" not in out
    assert "x\\x1b]0;PWNED\\x07\\x1b[31mred\\x1b[0m.py:f:1" in out
    assert "new\\nline" in out  # one row, not two
    assert "snap\\x1b[2J" in out
    assert "27 more candidates not shown; --limit N shows the first N, --all every one" in (
        " ".join(out.split())
    )
    when = datetime(2026, 1, 1, tzinfo=UTC)
    print_snapshots(
        [PlacedSnapshot(Snapshot(HOSTILE, 2, "english", "ready", when, ""), "s\x1b[1m")]
    )
    listed = capsys.readouterr().out
    assert "\x1b" not in listed and "x\\x1b]0;PWNED" in listed and "s\\x1b[1m" in listed


def test_query_on_a_terminal_is_a_table_of_the_first_10(db: Database) -> None:
    """A terminal on stdout: a real process (support.cli.run_on_terminal)."""
    with db.connect() as conn:
        load_snapshot(conn, "tty", [Document(f"d{i:02d}", f"read {i}") for i in range(25)])
    run = run_on_terminal(
        ["query", "tty", "read"], dsn=db.dsn, env={"COLUMNS": "50", "TERM": "dumb"}, stream="stdout"
    )
    assert (run.code, run.piped) == (0, b"")
    text = run.terminal.decode()
    assert not text.lstrip().startswith("{")  # not the JSON
    assert len(re.findall(r"\bd\d\d\b", text)) == 10
    assert "15 more candidates not shown" in " ".join(text.split())
