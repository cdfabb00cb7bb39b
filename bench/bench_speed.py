"""Query speed against PostgreSQL's own full-text ranking, side by side in one run.

``--size`` distinct real-size functions (``cosqa-distinct``, default 200,000; the
issue's row is at 1,000,000) are loaded self-contained as snapshot ``speed``. Then, for
``--queries`` CoSQA questions, in a rotating order on one connection planned per call
(``prepare_threshold=None``, as a command-line process is):

* ``bm25`` and ``identifier_bm25_baseline_first``: the whole
  ``riido_pg.rank_snapshot(conn, "speed", question, policy=P, limit=10)`` call;
* native: ``SELECT doc_ord FROM bench_native WHERE tsv @@ q ORDER BY ts_rank(tsv, q)
  DESC LIMIT 10``, q the OR of the question's english lexemes, on a copy of the
  snapshot's ``tsv_raw`` with a GIN index (the reference of bench/TOPK.md).

Reported: p50 / p95 ms of each and each policy's p50 / p95 as a multiple of native's.
``--other CHECKOUT`` also runs every policy's call through that checkout's code (a
child process with ``PYTHONPATH=CHECKOUT`` on its own connection, sent each question
in turn), in the same rotation, so two versions meet the same load, question by
question (the schema must be the same):

    python bench/bench_speed.py --keep                       # loads, prints the kept name
    python bench/bench_speed.py --reuse riido_bench_speed_<hex> --other ../main
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import corpus
import psycopg
from common import base_parser, create_database, markdown_table, write_results
from psycopg.conninfo import make_conninfo
from support.database import drop_database

import riido_pg
from riido_pg import load_snapshot, rank_snapshot

POLICIES = ("bm25", "identifier_bm25_baseline_first")
NATIVE = (
    "SELECT doc_ord FROM bench_native WHERE tsv @@ to_tsquery('english', %s) "
    "ORDER BY ts_rank(tsv, to_tsquery('english', %s)) DESC LIMIT 10"
)


#: The other checkout's side: one ranking per line of stdin, its wall ms on stdout.
OTHER_CHILD = r"""
import json, sys, time
import psycopg
from riido_pg import rank_snapshot
conn = psycopg.connect(sys.argv[1], autocommit=True, prepare_threshold=None)
print("ready", flush=True)
for line in sys.stdin:
    question, policy = json.loads(line)
    t = time.perf_counter()
    rank_snapshot(conn, "speed", question, policy=policy, limit=10)
    print(1000 * (time.perf_counter() - t), flush=True)
"""


def build(dsn: str, size: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        began = time.perf_counter()
        load_snapshot(conn, "speed", corpus.iter_cosqa_distinct(size), jobs=2, fresh=True)
        print(f"loaded {size:,} in {time.perf_counter() - began:.1f} s", flush=True)
        conn.execute(
            "CREATE TABLE bench_native AS SELECT d.doc_ord, t.tsv_raw AS tsv "
            "FROM riido.snapshot_segments AS p "
            "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
            "JOIN riido.texts AS t ON t.key = d.text_key WHERE p.snapshot_id = 'speed'"
        )
        conn.execute("CREATE INDEX ON bench_native USING gin (tsv)")
        conn.execute("VACUUM ANALYZE bench_native")


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--size", type=int, default=200_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--reuse", default=None, help="a kept database of an earlier run")
    p.add_argument("--other", type=Path, default=None, help="another checkout, run beside")
    args = p.parse_args()
    size = 3_000 if args.quick else args.size
    if args.reuse:
        dbname = args.reuse
        dsn = make_conninfo(args.dsn, dbname=dbname)
    else:
        dbname, dsn = create_database(args.dsn, "speed")
        build(dsn, size)
    try:
        conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=None)
        size = int(
            conn.execute(
                "SELECT document_count FROM riido.snapshots WHERE snapshot_id = 'speed'"
            ).fetchone()[0]  # type: ignore[index]
        )
        questions = corpus.cosqa_queries(10 if args.quick else args.queries)
        lexemes = [
            conn.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", (q,)).fetchone()[0]  # type: ignore[index]
            for q in questions
        ]
        for q in questions[:3]:  # warm the caches
            for policy in POLICIES:
                rank_snapshot(conn, "speed", q, policy=policy, limit=10)
        other = None
        names: list[str] = [*POLICIES, "native"]
        if args.other is not None:
            env = {**os.environ, "PYTHONPATH": str(args.other.resolve())}
            other = subprocess.Popen(
                [sys.executable, "-c", OTHER_CHILD, dsn],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
                cwd=args.other,
            )
            assert other.stdin is not None and other.stdout is not None
            assert other.stdout.readline().strip() == "ready"
            names += [f"{policy} ({args.other.name})" for policy in POLICIES]
        times: dict[str, list[float]] = {k: [] for k in names}
        for n, (q, lx) in enumerate(zip(questions, lexemes, strict=True)):
            tsq = (
                " | ".join("'" + x.replace("\\", "\\\\").replace("'", "\\'") + "'" for x in lx)
                or "''"
            )
            runs = [(name, q) for name in names]
            for name, arg in runs[n % len(runs) :] + runs[: n % len(runs)]:  # rotate the order
                if other is not None and name.endswith(f"({args.other.name})"):
                    assert other.stdin is not None and other.stdout is not None
                    other.stdin.write(json.dumps([arg, name.split(" ")[0]]) + "\n")
                    other.stdin.flush()
                    times[name].append(float(other.stdout.readline()))
                    continue
                began = time.perf_counter()
                if name == "native":
                    conn.execute(NATIVE, (tsq, tsq)).fetchall()
                else:
                    rank_snapshot(conn, "speed", arg, policy=name, limit=10)
                times[name].append(1000 * (time.perf_counter() - began))
        if other is not None:
            assert other.stdin is not None
            other.stdin.close()
            other.wait()
        native50, native95 = statistics.median(times["native"]), pct(times["native"], 0.95)
        rows = []
        summary: dict[str, Any] = {}
        for name, xs in times.items():
            p50, p95 = statistics.median(xs), pct(xs, 0.95)
            summary[name] = {"p50_ms": p50, "p95_ms": p95}
            mine = args.other is not None and name in POLICIES
            theirs = statistics.median(times[f"{name} ({args.other.name})"]) if mine else None
            rows.append(
                [name, p50, p95, p50 / native50, p95 / native95, p50 / theirs if theirs else "–"]
            )
        load = os.getloadavg()[0]
        print(
            f"\n{size:,} functions, limit 10, {len(questions)} questions, "
            f"riido-pg at {os.path.dirname(riido_pg.__file__)}, load average {load:.1f}\n"
        )
        headers = ["", "p50 ms", "p95 ms", "p50 × native", "p95 × native", "p50 × other"]
        print(markdown_table(headers, rows))
        write_results(
            "bench_speed",
            {"size": size, "queries": len(questions), "load_average": load, "times": summary},
            args.out,
        )
    finally:
        if args.keep or args.reuse:
            print(f"(kept database {dbname})")
        else:
            drop_database(args.dsn, dbname)


if __name__ == "__main__":
    main()
