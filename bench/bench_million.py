"""A million tiny documents through ``load_snapshot``: time, peak RSS, bound parameters.

Loads ``--count`` (default 1,000,000) documents of about 20 bytes
(``corpus.tiny_documents``: ``readConfig(ctx) 42``-like) as one snapshot into a fresh
database, with the phase timings of ``bench_load`` and:

* peak RSS of this Python process (``ru_maxrss``, plus a 50 ms psutil sampler for the
  load alone) and the RSS before and after generating the documents;
* the largest number of bind parameters any statement of the load sent: every
  ``execute``/``executemany`` of the connection goes through a counting cursor
  (an upper bound: the number of values passed; an array counts as one parameter,
  which is what PostgreSQL's 65,535 limit counts), and every COPY is counted too.
  pg_stat_statements is used as a second witness when the server preloads it.

Afterwards one ``bm25`` query checks the snapshot answers.

    python bench/bench_million.py                    # 1,000,000
    python bench/bench_million.py --count 200000
    python bench/bench_million.py --quick            # 20,000
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import (
    base_parser,
    bench_database,
    connect,
    markdown_table,
    write_results,
)

PG_MAX_PARAMS = 65_535


class _Rss:
    def __init__(self) -> None:
        import psutil

        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __enter__(self) -> _Rss:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def counting_cursor_factory(stats: dict[str, Any]) -> Any:
    import psycopg

    def nparams(params: Any) -> int:
        if params is None:
            return 0
        return len(params)

    class CountingCursor(psycopg.Cursor):  # type: ignore[type-arg]
        def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
            n = nparams(params)
            stats["statements"] += 1
            if n > stats["max_params"]:
                stats["max_params"] = n
                stats["max_params_statement"] = str(query)[:120]
            return super().execute(query, params, **kw)

        def executemany(self, query: Any, params_seq: Any, **kw: Any) -> Any:
            rows = list(params_seq)
            stats["statements"] += len(rows)
            stats["max_params"] = max([stats["max_params"], *(nparams(r) for r in rows)])
            return super().executemany(query, rows, **kw)

        def copy(self, statement: Any, params: Any = None, **kw: Any) -> Any:
            stats["copies"] += 1
            stats["max_params"] = max(stats["max_params"], nparams(params))
            return super().copy(statement, params, **kw)

    return CountingCursor


def _pgss_max_params(dsn: str) -> int | None:
    """Largest $n placeholder pg_stat_statements saw in this database, if available."""
    import re

    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            rows = conn.execute(
                "SELECT query FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname = current_database()"
            ).fetchall()
    except psycopg.Error:
        return None
    best = 0
    for (q,) in rows:
        for m in re.finditer(r"\$(\d+)", q):
            best = max(best, int(m.group(1)))
    return best


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--count", type=int, default=1_000_000)
    args = p.parse_args()
    if args.quick:
        args.count = 20_000

    import psutil

    from riido_pg.ranking import rank_snapshot
    from riido_pg.storage import load_snapshot

    rss0 = psutil.Process().memory_info().rss
    t = time.perf_counter()
    docs = list(corpus.tiny_documents(args.count))
    gen_s = time.perf_counter() - t
    rss_docs = psutil.Process().memory_info().rss
    mean_bytes = sum(len(d.text) for d in docs) / len(docs)
    stats: dict[str, Any] = {
        "statements": 0,
        "copies": 0,
        "max_params": 0,
        "max_params_statement": "",
    }
    with bench_database(args.dsn, "million", keep=args.keep) as dsn:
        conn = connect(dsn)
        pgss_before = _pgss_max_params(dsn)
        conn.cursor_factory = counting_cursor_factory(stats)
        marks: dict[str, float] = {}

        def progress(phase: str, done: int, total: int) -> None:
            now = time.perf_counter()
            if phase == "documents" and done == total:
                marks["documents"] = now
            elif phase == "index":
                marks[f"index{done}"] = now

        conn.execute("CHECKPOINT")
        with _Rss() as sampler:
            t0 = time.perf_counter()
            result = load_snapshot(conn, "million", docs, progress=progress)
            t_end = time.perf_counter()
        assert result.action == "created" and result.documents == len(docs), result
        seconds = t_end - t0
        r = rank_snapshot(conn, "million", "read config", limit=10)
        assert len(r.candidates) == 10
        info = conn.execute(
            "SELECT pg_total_relation_size('riido.documents'), "
            "pg_total_relation_size('riido.postings'),"
            " (SELECT count(*) FROM riido.postings), (SELECT max(df) FROM riido.postings)"
        ).fetchone()
        pgss_after = _pgss_max_params(dsn)
        conn.close()
    peak_ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    phases = {
        "stage": marks["documents"] - t0,
        "insert": marks["index0"] - marks["documents"],
        "finalize_raw": marks["index1"] - marks["index0"],
        "finalize_ident": marks["index2"] - marks["index1"],
        "count_commit": t_end - marks["index2"],
    }
    out = {
        "count": args.count,
        "mean_doc_bytes": mean_bytes,
        "generate_s": gen_s,
        "seconds": seconds,
        "docs_per_s": args.count / seconds,
        "phases_s": phases,
        "rss_start_bytes": rss0,
        "rss_after_generate_bytes": rss_docs,
        "rss_peak_during_load_bytes": sampler.peak,
        "ru_maxrss_bytes": peak_ru,
        "statements": stats["statements"],
        "copies": stats["copies"],
        "max_bind_params": stats["max_params"],
        "max_bind_params_statement": stats["max_params_statement"],
        "pg_stat_statements_max_placeholder": pgss_after if pgss_before is not None else None,
        "documents_bytes": info[0],
        "postings_bytes": info[1],
        "postings_rows": info[2],
        "max_df": info[3],
        "load_avg": os.getloadavg()[0],
    }
    mib = 2**20
    print(f"\n### {args.count:,} tiny documents (≈{mean_bytes:.0f} bytes) via load_snapshot\n")
    print(
        markdown_table(
            [
                "docs",
                "s",
                "docs/s",
                "peak RSS MiB (load)",
                "RSS MiB after generating docs",
                "ru_maxrss MiB",
                "statements",
                "COPYs",
                "max bind params",
                f"≤ {PG_MAX_PARAMS:,}",
            ],
            [
                [
                    args.count,
                    round(seconds, 1),
                    round(args.count / seconds),
                    round(sampler.peak / mib),
                    round(rss_docs / mib),
                    round(peak_ru / mib),
                    stats["statements"],
                    stats["copies"],
                    stats["max_params"],
                    "yes" if stats["max_params"] <= PG_MAX_PARAMS else "NO",
                ]
            ],
        )
    )
    print("\nphases (s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    if out["pg_stat_statements_max_placeholder"] is None:
        print(
            "(pg_stat_statements is not preloaded on this server; the counting cursor is "
            "the witness)"
        )
    write_results("million", out, args.out)
    if stats["max_params"] > PG_MAX_PARAMS:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
