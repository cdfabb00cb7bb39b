"""A bounded load test on loopback: several query processes and a loader of another
snapshot at once. No errors, and every result identical to the single-client one."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from support.cli import cli_env, reaped, run_cli
from support.corpus import stdlib_functions
from support.database import Database
from support.sessions import WAIT

from riido_pg import load_snapshot, rank_snapshot
from riido_pg.ranking import evaluated_policies

QUERIES = [
    "parse a quoted string",
    "read config file sections",
    "encode json object",
    "split shell command line",
    "wrap text to width",
    "match file name pattern",
    "add argument to parser",
    "format help message",
    "escape special characters",
    "ReadConfig getHTTPResponseCode",
]
#: The policies that need nothing but the query (no hints file), from the registry.
POLICIES = evaluated_policies()
ROUNDS = 8  # each worker runs every (query, policy) this many times

WORKER = r"""
import json, sys
from riido_pg import rank_snapshot
from riido_pg.db import connect
queries, policies, rounds = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
out = {}
with connect() as conn:
    for _ in range(rounds):
        for q in queries:
            for p in policies:
                r = rank_snapshot(conn, "shared", q, policy=p, limit=25)
                key = f"{p}|{q}"
                got = [[c.id, c.bm25_score] for c in r.candidates]
                if out.setdefault(key, got) != got:
                    raise SystemExit(f"unstable result for {key}")
print(json.dumps(out))
"""


def test_concurrent_queries_and_a_loader(db: Database, tmp_path: Path) -> None:
    docs = stdlib_functions(400)
    with db.connect() as conn:
        load_snapshot(conn, "shared", docs)
        expected = {
            f"{p}|{q}": [
                [c.id, c.bm25_score]
                for c in rank_snapshot(conn, "shared", q, policy=p, limit=25).candidates
            ]
            for q in QUERIES
            for p in POLICIES
        }
    other = tmp_path / "other.jsonl"
    other.write_text(
        "".join(
            json.dumps({"id": f"o{i}", "text": f"def other_{i}(x): return parse(x, {i})"}) + "\n"
            for i in range(30_000)
        )
    )
    args = [json.dumps(QUERIES), json.dumps(POLICIES), str(ROUNDS)]
    results: list[Any] = []
    with ExitStack() as running:
        workers = [
            running.enter_context(
                reaped(
                    subprocess.Popen(
                        [sys.executable, "-c", WORKER, *args],
                        env=cli_env(db.dsn),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                )
            )
            for _ in range(3)
        ]
        loader = run_cli(["load", "other", str(other)], dsn=db.dsn)
        for w in workers:
            out, err = w.communicate(timeout=WAIT)
            assert w.returncode == 0, err.decode()
            results.append(json.loads(out))
    assert loader.code == 0, loader.stderr
    for result in results:
        assert result == expected
    listed = json.loads(run_cli(["snapshots", "list", "--format", "json"], dsn=db.dsn).stdout)
    assert {r["id"]: r["documents"] for r in listed} == {"other": 30_000, "shared": len(docs)}
