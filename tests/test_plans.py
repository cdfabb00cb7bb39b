"""Plans that hold whatever the statistics say: the eval and query statements do work
linear in what they read, before ANALYZE, after it, with stale statistics, and with a
large unrelated snapshot stored beside the corpus.

"Work" is counted, not timed: EXPLAIN ANALYZE's rows removed by filters and join
filters. A plan that filters every target against every question (a nested loop
chosen from row estimates of 1) removes questions x targets rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.corpus import generated_corpus
from support.database import Database

from riido_pg import Document, get_snapshot, load_snapshot, rank_snapshot
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.evaluation.corpora import STORED_TARGETS, targets_statement
from riido_pg.ranking import bm25
from riido_pg.resources import sql_text

BIG = 20_000


def _removed(plan: dict[str, Any]) -> int:
    total = int(plan.get("Rows Removed by Filter", 0)) + int(
        plan.get("Rows Removed by Join Filter", 0)
    )
    return total + sum(_removed(p) for p in plan.get("Plans", []))


def removed_rows(conn: Any, statement: str, params: dict[str, Any]) -> int:
    row = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", params).fetchone()
    return _removed(row[0][0]["Plan"])


def _big(conn: Any, snapshot_id: str, salt: str) -> None:
    docs = [
        Document(f"{salt}{i:06d}", f"def get_value_{i % 97}(self, key): return self.{salt}[key]")
        for i in range(BIG)
    ]
    load_snapshot(conn, snapshot_id, docs)


@pytest.fixture(scope="module")
def corpus(db: Database, tmp_path_factory: pytest.TempPathFactory) -> str:
    directory = generated_corpus(tmp_path_factory.mktemp("plans") / "beir", 11)
    with db.connect() as conn:
        _big(conn, "big-before", "a")
        return store_corpus(conn, Path(directory)).snapshot_id


def _check(conn: Any, snapshot_id: str) -> str:
    n = conn.execute(
        "SELECT (SELECT count(*) FROM riido.questions WHERE snapshot_id = %(s)s) "
        "+ (SELECT count(*) FROM riido.targets WHERE snapshot_id = %(s)s)",
        {"s": snapshot_id},
    ).fetchone()[0]
    segments = list(get_snapshot(conn, snapshot_id).segments)
    statements = {
        "eval_questions": sql_text("eval_questions"),
        "eval_targets": targets_statement(STORED_TARGETS).as_string(conn),
    }
    for name, statement in statements.items():
        params = {"snapshot_id": snapshot_id, "segments": segments}
        removed = removed_rows(conn, statement, params)
        assert removed <= n, (name, removed, n)
    return evaluate(conn, snapshot_id).to_json()


def test_eval_plans_hold_before_and_after_statistics(db: Database, corpus: str) -> None:
    with db.connect() as conn:
        fresh_load = _check(conn, corpus)
        for table in ("snapshots", "documents", "postings", "questions", "targets"):
            conn.execute(f"ANALYZE riido.{table}")
        assert _check(conn, corpus) == fresh_load
        _big(conn, "big-after", "b")  # the statistics are stale now
        assert _check(conn, corpus) == fresh_load


def test_query_plans_hold_before_and_after_statistics(db: Database, corpus: str) -> None:
    with db.connect() as conn:
        before = rank_snapshot(conn, corpus, "read config value", limit=10)
        for table in ("documents", "postings"):
            conn.execute(f"ANALYZE riido.{table}")
        assert rank_snapshot(conn, corpus, "read config value", limit=10) == before
        lexemes = ["config", "read", "valu"]
        query = bm25.ranked(get_snapshot(conn, corpus).target, "raw", lexemes, 10)
        removed = removed_rows(conn, query.statement.as_string(conn), query.params)
        assert removed <= 303, removed
