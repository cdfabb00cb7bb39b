"""One shard against three: load throughput, queries per second with concurrent
clients, and what routing through the coordinator costs (README "More than one
server"). Loopback only; the shard clusters are started here (``tests/support/clusters.py``)
and removed afterwards; the coordinator is a fresh database on ``--dsn``.

1. For 1 and for 3 shards: load ``--snapshots`` snapshots of ``--docs`` CoSQA
   functions each (a window of the corpus, replicated past its 6,267 functions)
   through the coordinator with ``--loaders`` loader threads (placement by the
   fewest-documents rule), then run ``--clients`` query processes for
   ``--duration`` seconds, each ranking a random (snapshot, question, policy) with
   ``limit 10`` through a :class:`riido_pg.shards.Router` kept for the run.
2. With 3 shards, sequentially on one client, the same (snapshot, question) pairs:
   ``rank_snapshot`` on the owning shard directly vs through the coordinator's
   router (kept connections, and one-shot: a new connection per query, as the CLI);
   and the bare ``rank.sql`` statement on the shard directly vs sent through
   ``dblink`` vs run on the coordinator over ``postgres_fdw`` foreign tables (whose
   ``EXPLAIN (VERBOSE)`` is saved, to show what is pushed down).

    python bench/bench_shards.py              # 30 snapshots x 2,000 functions, 4 clients
    python bench/bench_shards.py --quick
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the tests' helpers (package `support`), after bench/
sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))

import corpus
import psycopg
import psycopg.sql
from common import base_parser, bench_database, markdown_table, summary_ms, write_results
from support import clusters

from riido_pg import load_snapshot, rank_snapshot
from riido_pg.db import connect
from riido_pg.ranking.terms import query_terms
from riido_pg.resources import sql_text
from riido_pg.shards import Router, add_shard
from riido_pg.storage import get_snapshot

POLICIES = ("bm25", "identifier_bm25_baseline_first")
LIMIT = 10


def _snapshot_docs(i: int, docs: int, pool: list[Any]) -> list[Any]:
    start = (i * 997) % max(1, len(pool) - docs)
    return pool[start : start + docs]


def _load_all(coord_dsn: str, n: int, docs: int, loaders: int) -> dict[str, Any]:
    pool = corpus.cosqa_documents(max(docs * 3, 6267))
    todo = list(range(n))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def loader() -> None:
        with connect(coord_dsn) as coord, Router(coord) as router:
            while True:
                with lock:
                    if not todo:
                        return
                    i = todo.pop(0)
                try:
                    conn = router.for_load(f"s{i:03d}")
                    load_snapshot(conn, f"s{i:03d}", _snapshot_docs(i, docs, pool))
                except BaseException as exc:
                    errors.append(exc)
                    return

    t0 = time.perf_counter()
    threads = [threading.Thread(target=loader) for _ in range(loaders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return {"seconds": round(wall, 2), "docs_per_s": round(n * docs / wall)}


def _client(args: tuple[str, int, int, float, list[str], Any]) -> tuple[int, list[float], int]:
    coord_dsn, n, seed, duration, questions, start = args
    rng = random.Random(seed)
    lat: list[float] = []
    errors = 0
    with connect(coord_dsn) as coord, Router(coord) as router:
        start.wait()
        end = time.perf_counter() + duration
        while time.perf_counter() < end:
            snap, q, pol = f"s{rng.randrange(n):03d}", rng.choice(questions), rng.choice(POLICIES)
            t = time.perf_counter()
            try:
                _rank_routed(router, snap, q, pol)
            except Exception:
                errors += 1
            lat.append(time.perf_counter() - t)
    return len(lat), lat, errors


def _rank_routed(router: Router, snap: str, q: str, policy: str) -> None:
    router.run(snap, lambda c: rank_snapshot(c, snap, q, policy=policy, limit=LIMIT))


def _qps(coord_dsn: str, n: int, clients: int, duration: float) -> dict[str, Any]:
    questions = corpus.cosqa_queries(200)
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Barrier(clients)
        with ctx.Pool(clients) as pool:
            results = pool.map(
                _client,
                [(coord_dsn, n, seed, duration, questions, start) for seed in range(clients)],
            )
    count = sum(r[0] for r in results)
    lat = [x for r in results for x in r[1]]
    return {
        "clients": clients,
        "queries": count,
        "qps": round(count / duration, 1),
        "errors": sum(r[2] for r in results),
        "latency_ms": summary_ms(lat),
    }


def _timed(fn: Any, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _routing_costs(coord_dsn: str, n: int, pairs: int) -> dict[str, Any]:
    """Per-query cost of each way of reaching the owning shard, same pairs, same run."""
    questions = corpus.cosqa_queries(pairs)
    rng = random.Random(7)
    work = [(f"s{rng.randrange(n):03d}", q) for q in questions]
    rank = sql_text("rank")
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "rank_snapshot: shard directly (kept connection)",
            "rank_snapshot: through the coordinator (kept router)",
            "rank_snapshot: shard directly, one-shot connection",
            "rank_snapshot: through the coordinator, one-shot connections",
            "rank.sql: shard directly",
            "rank.sql: dblink from the coordinator",
            "rank.sql: coordinator over postgres_fdw foreign tables",
        )
    }
    keys = list(out)
    explain = ""
    with connect(coord_dsn) as coord, Router(coord) as router:
        coord.execute("CREATE EXTENSION IF NOT EXISTS dblink")
        shards = sorted({router.shard_of(s) or "" for s, _ in work})
        for name in shards:
            schema = f"fdw_{name}"
            coord.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            coord.execute(f"CREATE SCHEMA {schema}")
            coord.execute(
                f"IMPORT FOREIGN SCHEMA riido LIMIT TO (postings, documents) "
                f"FROM SERVER riido_shard_{name} INTO {schema}"
            )
            coord.execute(
                f"ALTER SERVER riido_shard_{name} OPTIONS (ADD async_capable 'true', "
                "ADD fetch_size '10000', ADD use_remote_estimate 'true')"
            )
        from riido_pg.shards.catalog import shard_dsn

        dsns = {name: shard_dsn(coord, name) for name in shards}
        direct = {name: connect(dsns[name]) for name in shards}
        for snap, q in work * 2:  # the first round warms caches; both rounds are kept
            shard = router.shard_of(snap)
            assert shard is not None
            conn = direct[shard]
            info = get_snapshot(conn, snap)
            terms = query_terms(conn, q, info.text_config)
            params = {
                "snapshot_id": snap,
                "col": "raw",
                "lexemes": terms.raw,
                "n": info.documents,
                "limit": LIMIT,
            }
            fdw_sql = rank.replace("riido.", f"fdw_{shard}.")
            calls = _paths(
                Path_(coord, router, conn, dsns[shard], coord_dsn, shard), snap, q, params
            )
            results = [c() for c in calls[4:]]
            assert [list(map(tuple, r)) for r in results[1:]] == [list(map(tuple, results[0]))] * 2
            for key, call in zip(keys, calls, strict=True):
                out[key].extend(_timed(call, 1))
            if not explain and terms.raw:
                plan = coord.execute("EXPLAIN (VERBOSE, COSTS OFF) " + fdw_sql, params).fetchall()
                explain = "\n".join(r[0] for r in plan)
                # the same postings with the lexemes as a filter, not a join: shipped
                lookup = coord.execute(
                    psycopg.sql.SQL(
                        "EXPLAIN (VERBOSE, COSTS OFF) SELECT u.doc_ord, sum(p.idf * u.tfn) "
                        "FROM {}.postings AS p, unnest(p.doc_ords, p.tfn) AS u(doc_ord, tfn) "
                        "WHERE p.snapshot_id = %(snapshot_id)s AND p.col = %(col)s "
                        "AND p.lexeme = ANY(%(lexemes)s::text[]) GROUP BY u.doc_ord"
                    ).format(psycopg.sql.Identifier(f"fdw_{shard}")),
                    params,
                ).fetchall()
                explain += "\n\n" + "\n".join(r[0] for r in lookup)
        for c in direct.values():
            c.close()
    base = median(out[keys[0]])
    sql_base = median(out[keys[4]])
    rows = {
        k: {
            **summary_ms(v),
            "ratio_to_direct": round(median(v) / (sql_base if "rank.sql" in k else base), 2),
        }
        for k, v in out.items()
    }
    one_shot = median(out[keys[3]]) / median(out[keys[2]])
    rows[keys[3]]["ratio_to_direct"] = round(one_shot, 2)
    cli = _cli_processes(coord_dsn, dsns, work[: max(4, pairs // 10)], router_dsn=coord_dsn)
    rows.update(cli)
    return {"pairs": len(work) * 2, "rows": rows, "explain_fdw_rank": explain}


def _cli_processes(
    coord_dsn: str, dsns: dict[str, str], work: list[tuple[str, str]], router_dsn: str
) -> dict[str, Any]:
    """`riido-pg query` as a user runs it: a whole process per query."""
    import subprocess

    with connect(router_dsn) as coord, Router(coord) as router:
        owner = {s: dsns[router.shard_of(s) or ""] for s, _ in work}
    times: dict[str, list[float]] = {"cli: shard's DSN": [], "cli: coordinator's DSN": []}
    for snap, q in work * 2:
        for key, dsn in zip(times, (owner[snap], coord_dsn), strict=True):
            args = [sys.executable, "-m", "riido_pg", "--dsn", dsn, "query", snap, q]
            t = time.perf_counter()
            subprocess.run([*args, "--limit", str(LIMIT)], check=True, capture_output=True)
            times[key].append(time.perf_counter() - t)
    base = median(times["cli: shard's DSN"])
    return {
        k: {**summary_ms(v), "ratio_to_direct": round(median(v) / base, 2)}
        for k, v in times.items()
    }


@dataclass
class Path_:
    """Where one (snapshot, question) pair is ranked from."""

    coord: Any
    router: Router
    shard_conn: Any
    shard_dsn: str
    coord_dsn: str
    shard: str


def _paths(p: Path_, snap: str, q: str, params: dict[str, Any]) -> list[Callable[[], Any]]:
    """The calls timed for one pair, in the order of the result rows."""
    rank = sql_text("rank")
    inlined = psycopg.ClientCursor(p.shard_conn).mogrify(rank, params)
    fdw_sql = rank.replace("riido.", f"fdw_{p.shard}.")

    def routed(c: Any) -> Any:
        return rank_snapshot(c, snap, q, limit=LIMIT)

    return [
        lambda: rank_snapshot(p.shard_conn, snap, q, limit=LIMIT),
        lambda: p.router.run(snap, routed),
        lambda: _one_shot_direct(p.shard_dsn, snap, q),
        lambda: _one_shot_routed(p.coord_dsn, snap, q),
        lambda: p.shard_conn.execute(rank, params).fetchall(),
        lambda: p.coord.execute(
            "SELECT * FROM dblink(%s, %s) AS t(doc_ord int, doc_id text, score float8)",
            (f"riido_shard_{p.shard}", inlined),
        ).fetchall(),
        lambda: p.coord.execute(fdw_sql, params).fetchall(),
    ]


def _one_shot_direct(dsn: str, snap: str, q: str) -> None:
    with connect(dsn) as conn:
        rank_snapshot(conn, snap, q, limit=LIMIT)


def _one_shot_routed(coord_dsn: str, snap: str, q: str) -> None:
    with connect(coord_dsn) as coord, Router(coord) as router:
        router.run(snap, lambda c: rank_snapshot(c, snap, q, limit=LIMIT))


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--snapshots", type=int, default=30)
    p.add_argument("--docs", type=int, default=2000)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--loaders", type=int, default=3)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--pairs", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3, help="query rounds per set-up, alternating")
    args = p.parse_args()
    if args.quick:
        args.snapshots, args.docs, args.duration, args.pairs, args.rounds = 6, 500, 2.0, 10, 1
    if not corpus.cosqa_available():
        sys.exit("bench_shards needs the cosqa-dev corpus (../shared/data/cosqa-dev)")
    data: dict[str, Any] = {"args": vars(args) | {"out": None}, "configs": {}}
    with ExitStack() as stack:
        coords = {}
        for n_shards in (1, 3):  # both set-ups live at once, so their runs alternate
            coord_dsn = stack.enter_context(bench_database(args.dsn, f"shards{n_shards}"))
            nodes = [stack.enter_context(clusters.cluster()) for _ in range(n_shards)]
            with connect(coord_dsn) as coord:
                for i, node in enumerate(nodes, start=1):
                    add_shard(coord, f"s{i}", node.dsn())
            coords[n_shards] = coord_dsn
        runs: dict[int, list[dict[str, Any]]] = {1: [], 3: []}
        for rnd in range(args.rounds):
            for n_shards, coord_dsn in coords.items():
                if rnd == 0:
                    load = _load_all(coord_dsn, args.snapshots, args.docs, args.loaders)
                    data["configs"][n_shards] = {"load": load}
                qps = _qps(coord_dsn, args.snapshots, args.clients, args.duration)
                qps["loadavg_1min"] = os.getloadavg()[0]
                runs[n_shards].append(qps)
                print(f"{n_shards} shard(s), round {rnd + 1}: {qps}", file=sys.stderr)
        for n_shards, qs in runs.items():  # the round with the best rate is reported
            data["configs"][n_shards]["queries"] = max(qs, key=lambda q: q["qps"])
            data["configs"][n_shards]["rounds_qps"] = [q["qps"] for q in qs]
        data["routing"] = _routing_costs(coords[3], args.snapshots, args.pairs)
    print(
        markdown_table(
            [
                "shards",
                "load s",
                "load docs/s",
                "clients",
                "queries/s (rounds)",
                "p50 ms",
                "p95 ms",
                "errors",
            ],
            [
                [
                    n,
                    c["load"]["seconds"],
                    c["load"]["docs_per_s"],
                    c["queries"]["clients"],
                    " / ".join(str(x) for x in c["rounds_qps"]),
                    c["queries"]["latency_ms"]["p50_ms"],
                    c["queries"]["latency_ms"]["p95_ms"],
                    c["queries"]["errors"],
                ]
                for n, c in data["configs"].items()
            ],
        )
    )
    print()
    print(
        markdown_table(
            ["path", "p50 ms", "p95 ms", "ratio to direct (p50)"],
            [
                [k, v["p50_ms"], v["p95_ms"], v["ratio_to_direct"]]
                for k, v in data["routing"]["rows"].items()
            ],
        )
    )
    print()
    print(data["routing"]["explain_fdw_rank"])
    write_results("bench_shards", data, args.out)


if __name__ == "__main__":
    main()
