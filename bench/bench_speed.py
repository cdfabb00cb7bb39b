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
To compare two versions of riido-pg on the same data, keep the database and point
``PYTHONPATH`` at the other checkout (the schema is the same):

    python bench/bench_speed.py --keep                       # loads, prints the kept name
    PYTHONPATH=../main python bench/bench_speed.py --reuse riido_bench_speed_<hex>
    python bench/bench_speed.py --reuse riido_bench_speed_<hex>
"""

from __future__ import annotations

import os
import statistics
import time
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
        times: dict[str, list[float]] = {k: [] for k in (*POLICIES, "native")}
        for n, (q, lx) in enumerate(zip(questions, lexemes, strict=True)):
            tsq = (
                " | ".join("'" + x.replace("\\", "\\\\").replace("'", "\\'") + "'" for x in lx)
                or "''"
            )
            runs: list[tuple[str, Any]] = [
                *((policy, (q, policy)) for policy in POLICIES),
                ("native", tsq),
            ]
            for name, arg in runs[n % 3 :] + runs[: n % 3]:  # rotate the order
                began = time.perf_counter()
                if name == "native":
                    conn.execute(NATIVE, (arg, arg)).fetchall()
                else:
                    rank_snapshot(conn, "speed", arg[0], policy=arg[1], limit=10)
                times[name].append(1000 * (time.perf_counter() - began))
        native50, native95 = statistics.median(times["native"]), pct(times["native"], 0.95)
        rows = []
        summary: dict[str, Any] = {}
        for name, xs in times.items():
            p50, p95 = statistics.median(xs), pct(xs, 0.95)
            summary[name] = {"p50_ms": p50, "p95_ms": p95}
            rows.append([name, p50, p95, p50 / native50, p95 / native95])
        load = os.getloadavg()[0]
        print(
            f"\n{size:,} functions, limit 10, {len(questions)} questions, "
            f"riido-pg at {os.path.dirname(riido_pg.__file__)}, load average {load:.1f}\n"
        )
        print(markdown_table(["", "p50 ms", "p95 ms", "p50 × native", "p95 × native"], rows))
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
