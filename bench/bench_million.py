"""A million documents through ``load_snapshot`` and ``riido-pg load``: time, peak
RSS, bound parameters.

Loads ``--count`` (default 1,000,000) documents as one snapshot into a fresh
database: real-size CoSQA functions with every text distinct
(``--corpus cosqa-distinct``, the default, ≈320 bytes) or ``tiny`` ones of about 20
bytes (``corpus.tiny_documents``: ``readConfig(ctx) 42``-like). The library run feeds
``load_snapshot`` a generator (the documents never exist as a list), the CLI run
loads a ``.jsonl`` file written beforehand (``python -m riido_pg load``, a child
process), each with ``--jobs``. Reported:

* peak RSS of the loading process: for the library run a 50 ms psutil sampler around
  the load (the process's RSS before it is shown too), for the CLI run the child's
  ``ru_maxrss``;
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

import json
import os
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


def _cli_load(dsn: str, source: list[str], jobs: int) -> dict[str, Any]:
    """``riido-pg load million SOURCE... --jobs N`` as a child process."""
    import subprocess
    import tempfile

    env = {k: v for k, v in os.environ.items() if not k.startswith("RIIDO_PG_")}
    env["RIIDO_PG_DSN"] = dsn
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "riido_pg", "load", "million", *source, "--jobs", str(jobs)],
            stdout=out,
            stderr=err,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"riido-pg load failed ({proc.returncode}): {stderr.strip()}")
    peak = usage.ru_maxrss * 1024
    return {"seconds": seconds, "peak_rss_bytes": peak, "stdout": stdout.strip()}


def _documents(kind: str, count: int) -> Any:
    """A generator: the documents are never all in memory."""
    if kind == "tiny":
        return corpus.tiny_documents(count)
    if kind == "cosqa-distinct":
        return corpus.iter_cosqa_distinct(count)
    return iter(corpus.documents(kind, count))


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--count", type=int, default=1_000_000)
    p.add_argument("--corpus", default="cosqa-distinct", help="cosqa-distinct, cosqa or tiny")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--no-cli", action="store_true", help="skip the CLI runs")
    p.add_argument(
        "--from-table",
        action="store_true",
        help="also load the same rows from a table (load --from-table) in a third database",
    )
    args = p.parse_args()
    if args.quick:
        args.count = 20_000

    import tempfile

    import psutil

    from riido_pg.ranking import rank_snapshot
    from riido_pg.storage import load_snapshot

    stats: dict[str, Any] = {
        "statements": 0,
        "copies": 0,
        "max_params": 0,
        "max_params_statement": "",
    }
    size = {"bytes": 0, "n": 0}

    def counted(docs: Any) -> Any:
        for d in docs:
            size["bytes"] += len(d.text.encode())
            size["n"] += 1
            yield d

    with bench_database(args.dsn, "million", keep=args.keep) as dsn:
        conn = connect(dsn)
        pgss_before = _pgss_max_params(dsn)
        conn.cursor_factory = counting_cursor_factory(stats)
        marks: dict[str, float] = {}

        def progress(phase: str, done: int, total: int) -> None:
            now = time.perf_counter()
            if phase == "documents" and total and done == total:
                marks["documents"] = now
            elif phase == "index" and done == 2:
                marks["postings"] = now

        conn.execute("CHECKPOINT")
        rss0 = psutil.Process().memory_info().rss
        with _Rss() as sampler:
            t0 = time.perf_counter()
            result = load_snapshot(
                conn,
                "million",
                counted(_documents(args.corpus, args.count)),
                progress=progress,
                jobs=args.jobs,
            )
            t_end = time.perf_counter()
        assert result.action == "created" and result.documents == args.count, result
        seconds = t_end - t0
        r = rank_snapshot(conn, "million", "read config", limit=10)
        assert len(r.candidates) == 10
        info = conn.execute(
            "SELECT pg_total_relation_size('riido.documents'), "
            "pg_total_relation_size('riido.texts'), pg_total_relation_size('riido.postings'),"
            " (SELECT count(*) FROM riido.postings), (SELECT max(df) FROM riido.postings)"
        ).fetchone()
        pgss_after = _pgss_max_params(dsn)
        conn.close()
    cli: dict[str, Any] | None = None
    if not args.no_cli:
        with tempfile.TemporaryDirectory(prefix="riido-million-") as tmp:
            path = Path(tmp) / "docs.jsonl"
            with path.open("w", encoding="utf-8") as fh:
                for d in _documents(args.corpus, args.count):
                    fh.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
            file_bytes = path.stat().st_size
            with bench_database(args.dsn, "million_cli", keep=args.keep) as dsn:
                cli = _cli_load(dsn, [str(path)], args.jobs)
            cli["file_bytes"] = file_bytes
            if args.from_table:
                with bench_database(args.dsn, "million_table", keep=args.keep) as dsn:
                    import psycopg

                    with psycopg.connect(dsn, autocommit=True) as c:
                        c.execute("CREATE TABLE public.functions (id text, body text)")
                        with (
                            c.cursor().copy("COPY public.functions FROM STDIN") as cp,
                            path.open(encoding="utf-8") as fh,
                        ):
                            for line in fh:
                                o = json.loads(line)
                                cp.write_row((o["id"], o["text"]))
                    table = _cli_load(
                        dsn,
                        [
                            "--from-table",
                            "public.functions",
                            "--id-column",
                            "id",
                            "--text-column",
                            "body",
                        ],
                        args.jobs,
                    )
                cli["from_table"] = table
    mean_bytes = size["bytes"] / max(1, size["n"])
    phases = {
        "documents": marks["documents"] - t0,
        "postings": marks["postings"] - marks["documents"],
        "rest": t_end - marks["postings"],
    }
    out = {
        "count": args.count,
        "corpus": args.corpus,
        "jobs": args.jobs,
        "mean_doc_bytes": mean_bytes,
        "seconds": seconds,
        "docs_per_s": args.count / seconds,
        "phases_s": phases,
        "rss_before_load_bytes": rss0,
        "rss_peak_during_load_bytes": sampler.peak,
        "cli": cli,
        "statements": stats["statements"],
        "copies": stats["copies"],
        "max_bind_params": stats["max_params"],
        "max_bind_params_statement": stats["max_params_statement"],
        "pg_stat_statements_max_placeholder": pgss_after if pgss_before is not None else None,
        "documents_bytes": info[0],
        "texts_bytes": info[1],
        "postings_bytes": info[2],
        "postings_rows": info[3],
        "max_df": info[4],
        "load_avg": os.getloadavg()[0],
    }
    mib = 2**20
    print(
        f"\n### {args.count:,} {args.corpus} documents (≈{mean_bytes:.0f} bytes), "
        f"--jobs {args.jobs}\n"
    )
    rows = [
        [
            "library (generator)",
            round(seconds, 1),
            round(args.count / seconds),
            round(sampler.peak / mib),
            round(rss0 / mib),
            stats["statements"],
            stats["copies"],
            stats["max_params"],
            "yes" if stats["max_params"] <= PG_MAX_PARAMS else "NO",
        ]
    ]

    def child_row(label: str, run: dict[str, Any]) -> list[Any]:
        """A CLI child's row: no in-process counts for it."""
        seconds = run["seconds"]
        peak = round(run["peak_rss_bytes"] / mib)
        return [label, round(seconds, 1), round(args.count / seconds), peak, *["–"] * 5]

    if cli is not None and "from_table" in cli:
        rows.append(child_row("riido-pg load --from-table", cli["from_table"]))
    if cli is not None:
        label = f"riido-pg load FILE ({cli['file_bytes'] / mib:,.0f} MiB of JSONL)"
        rows.append(child_row(label, cli))
    print(
        markdown_table(
            [
                "run",
                "s",
                "docs/s",
                "peak RSS MiB",
                "RSS MiB before",
                "statements",
                "COPYs",
                "max bind params",
                f"≤ {PG_MAX_PARAMS:,}",
            ],
            rows,
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
