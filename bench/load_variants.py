"""Prototype load pipelines, timed statement by statement and checked for equal output.

Not the product: a copy of ``riido_pg.store.write_documents`` with switches, to find
where load time goes and what a change would gain. Each variant runs in a fresh
database, inside one transaction like the real loader, against the same documents;
after the timed run the script compares its ``documents`` lengths, ``column_stats``
and ``postings`` (df, idf and the (doc_ord, tfn) pairs of every lexeme) with a
reference load by ``riido_pg.store.load_snapshot`` of the same documents, and fails
loudly on any difference.

Variants (``original`` is the loader SQL as first shipped, kept in this file; the
others start from the shipped ``sql/`` files):

``original``
    ``insert_documents.sql`` and ``finalize_column.sql`` of commit 3dc8455.
``original+once``
    plus ``OFFSET 0`` in the LATERAL subquery: PostgreSQL otherwise pulls the
    subquery up and evaluates each ``to_tsvector`` twice (for the column and inside
    the length subquery).
``original+once+mem``
    plus ``SET LOCAL work_mem = '256MB'`` (the finalize sort spills at 4 MB; an
    in-memory sort of ~1M rows turned out slower, not faster).
``original+once+hash``
    plus ``array_agg`` without ORDER BY in finalize, so PostgreSQL hash-aggregates
    the postings instead of sorting (what commit 5927ecf shipped).
``current``
    the shipped SQL files.
``current+mem``
    with ``work_mem = '256MB'``.
``current+inline``
    with ``ALTER TABLE riido.documents SET (toast_tuple_target = 8160)`` (a schema
    change): rows of ~2.2 kB (body + two tsvectors) stay inline instead of going
    through the toaster at the 2 kB default.
``current+inline+pipeline``
    plus Python identifier splitting overlapped with server work: a thread splits
    chunk k+1 while the server COPYs and inserts chunk k (psycopg releases the GIL
    while it waits); 5,000-document chunks.
``parallel``
    ``current+inline``, but the tsvectors are computed by a parallel ``CREATE TEMP
    TABLE ... AS SELECT to_tsvector(...)`` (2 workers) over an UNLOGGED staging table
    created inside the load transaction (parallel workers cannot read temporary
    tables), then inserted serially. Its gain needs an idle second core.
``original+once+mem+presorted`` (not in the default list)
    finalize aggregating a subquery sorted by (lexeme, doc_ord) with plain
    ``array_agg`` (one sort instead of a sort plus one per lexeme group).

    python bench/load_variants.py --size 20000
    python bench/load_variants.py --size 100000 --variants current,fast --repeat 1
    python bench/load_variants.py --quick
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from common import (
    CpuClock,
    base_parser,
    bench_database,
    connect,
    markdown_table,
    write_results,
)

VARIANTS: dict[str, set[str]] = {
    "original": {"original"},
    "original+once": {"original", "once"},
    "original+once+mem": {"original", "once", "mem"},
    "original+once+hash": {"original", "once", "hash"},
    "current": set(),
    "current+mem": {"mem"},
    "current+inline": {"inline"},
    "current+inline+pipeline": {"inline", "pipeline"},
    "parallel": {"inline", "parallel"},
    "original+once+mem+presorted": {"original", "once", "mem", "presorted"},
}
DEFAULT_VARIANTS = (
    "original",
    "original+once",
    "original+once+mem",
    "current",
    "current+mem",
    "current+inline",
    "current+inline+pipeline",
    "parallel",
)

# The loader SQL as first shipped (commit 3dc8455), kept here so the "before" numbers
# stay reproducible after sql/ changed.
ORIGINAL_INSERT = """
INSERT INTO riido.documents
    (snapshot_id, doc_ord, doc_id, body, tsv_raw, tsv_ident, len_raw, len_ident)
SELECT %(snapshot_id)s,
       s.doc_ord,
       s.doc_id,
       s.body,
       t.raw,
       t.ident,
       (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.raw) AS u)::int,
       (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(t.ident) AS u)::int
FROM riido_stage AS s
CROSS JOIN LATERAL (
    SELECT to_tsvector(%(text_config)s::regconfig, s.body) AS raw,
           to_tsvector(%(text_config)s::regconfig, s.ident) AS ident
) AS t
"""
ORIGINAL_FINALIZE = """
WITH stats AS (
    INSERT INTO riido.column_stats (snapshot_id, col, documents, avgdl, terms)
    SELECT %(snapshot_id)s, %(col)s, count(*), coalesce(avg(d.{len}), 0)::float8, 0
    FROM riido.documents AS d
    WHERE d.snapshot_id = %(snapshot_id)s
    RETURNING documents AS n, avgdl
)
INSERT INTO riido.postings (snapshot_id, col, lexeme, df, idf, doc_ords, tfn)
SELECT %(snapshot_id)s,
       %(col)s,
       u.lexeme,
       count(*),
       ln(1 + (s.n - count(*) + 0.5) / (count(*) + 0.5)),
       array_agg(d.doc_ord ORDER BY d.doc_ord),
       array_agg(
           cardinality(u.positions)::float8
           / (cardinality(u.positions) + %(k1)s * (1 - %(b)s + %(b)s * d.{len} / s.avgdl))
           ORDER BY d.doc_ord
       )
FROM riido.documents AS d
CROSS JOIN LATERAL unnest(d.{tsv}) AS u
CROSS JOIN stats AS s
WHERE d.snapshot_id = %(snapshot_id)s
GROUP BY u.lexeme, s.n, s.avgdl
"""

STAGE_COPY = "COPY riido_stage (doc_ord, doc_id, body, ident) FROM STDIN"

PRESORTED_FINALIZE = """
WITH stats AS (
    INSERT INTO riido.column_stats (snapshot_id, col, documents, avgdl, terms)
    SELECT %(snapshot_id)s, %(col)s, count(*), coalesce(avg(d.{len}), 0)::float8, 0
    FROM riido.documents AS d
    WHERE d.snapshot_id = %(snapshot_id)s
    RETURNING documents AS n, avgdl
)
INSERT INTO riido.postings (snapshot_id, col, lexeme, df, idf, doc_ords, tfn)
SELECT %(snapshot_id)s, %(col)s, t.lexeme, count(*),
       ln(1 + (t.n - count(*) + 0.5) / (count(*) + 0.5)),
       array_agg(t.doc_ord), array_agg(t.tfn)
FROM (
    SELECT u.lexeme, s.n, d.doc_ord,
           cardinality(u.positions)::float8
           / (cardinality(u.positions) + %(k1)s * (1 - %(b)s + %(b)s * d.{len} / s.avgdl)) AS tfn
    FROM riido.documents AS d
    CROSS JOIN LATERAL unnest(d.{tsv}) AS u
    CROSS JOIN stats AS s
    WHERE d.snapshot_id = %(snapshot_id)s
    ORDER BY u.lexeme, d.doc_ord
) AS t
GROUP BY t.lexeme, t.n
"""


def original_split(text: str) -> str:
    """split_identifiers as first shipped: lowers part by part (same output)."""
    from riido_pg import splitting

    return " ".join(splitting.split_words(text))


def _finalize_sql(opts: set[str]) -> str:
    from riido_pg.resources import sql_text

    if "presorted" in opts:
        return PRESORTED_FINALIZE
    text = ORIGINAL_FINALIZE if "original" in opts else sql_text("finalize_column")
    if "hash" in opts:
        text = text.replace("array_agg(d.doc_ord ORDER BY d.doc_ord)", "array_agg(d.doc_ord)")
        text = text.replace("\n           ORDER BY d.doc_ord\n       )", "\n       )")
        assert "ORDER BY" not in text, text
    return text


def _insert_sql(opts: set[str]) -> str:
    from riido_pg.resources import sql_text

    text = ORIGINAL_INSERT if "original" in opts else sql_text("insert_documents")
    if "once" in opts and "OFFSET 0" not in text:
        assert ") AS t" in text
        text = text.replace(") AS t", "    OFFSET 0\n) AS t")
    return text


Row = tuple[int, str, str, str]


def _chunks(ordered: Sequence[Any], size: int, split: Callable[[str], str]) -> Iterator[list[Row]]:
    for lo in range(0, len(ordered), size):
        yield [(i, d.id, d.text, split(d.text)) for i, d in enumerate(ordered[lo : lo + size], lo)]


def _threaded(gen: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    end = object()

    def run() -> None:
        for item in gen:
            q.put(item)
        q.put(end)

    threading.Thread(target=run, daemon=True).start()
    while (item := q.get()) is not end:
        yield item


def write_variant(
    conn: Any,
    snapshot_id: str,
    docs: Sequence[Any],
    opts: set[str],
    clock: CpuClock,
    chunk: int = 5_000,
) -> None:
    """A copy of riido_pg.store.write_documents with switches (no error diagnosis)."""
    from psycopg import sql

    from riido_pg.resources import sql_text
    from riido_pg.splitting import split_identifiers
    from riido_pg.store import K1, B

    split = original_split if "original" in opts else split_identifiers
    params = {"snapshot_id": snapshot_id, "text_config": "english"}
    if "mem" in opts:
        conn.execute("SET LOCAL work_mem = '256MB'")
    ordered = sorted(docs, key=lambda d: d.id)
    clock.lap("python sort")
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_stage "
        "(doc_ord int, doc_id text, body text, ident text) ON COMMIT DROP"
    )
    insert = _insert_sql(opts)
    if "parallel" in opts:
        # parallel workers cannot read temporary tables: stage in an UNLOGGED table
        # created (and dropped) inside the load transaction, compute the tsvectors with
        # a parallel CREATE TABLE AS, then insert the rows serially.
        rows_all = [(i, d.id, d.text, split(d.text)) for i, d in enumerate(ordered)]
        clock.lap("python split")
        conn.execute(
            "CREATE UNLOGGED TABLE riido.bench_stage "
            "(doc_ord int, doc_id text, body text, ident text)"
        )
        copy = "COPY riido.bench_stage (doc_ord, doc_id, body, ident) FROM STDIN"
        with conn.cursor().copy(copy) as cp:
            for r in rows_all:
                cp.write_row(r)
        clock.lap("COPY")
        for setting in (
            "max_parallel_workers_per_gather = 2",
            "parallel_setup_cost = 0",
            "parallel_tuple_cost = 0",
            "min_parallel_table_scan_size = 0",
        ):
            conn.execute(f"SET LOCAL {setting}")
        conn.execute(
            "CREATE TEMP TABLE riido_tsv ON COMMIT DROP AS "
            "SELECT doc_ord, doc_id, body, to_tsvector(%(text_config)s::regconfig, body) AS raw, "
            "to_tsvector(%(text_config)s::regconfig, ident) AS ident FROM riido.bench_stage",
            params,
        )
        clock.lap("to_tsvector (parallel CTAS)")
        conn.execute(
            "INSERT INTO riido.documents (snapshot_id, doc_ord, doc_id, body, tsv_raw, tsv_ident,"
            " len_raw, len_ident) SELECT %(snapshot_id)s, doc_ord, doc_id, body, raw, ident,"
            " (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(raw) AS u)::int,"
            " (SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(ident) AS u)::int"
            " FROM riido_tsv",
            params,
        )
        conn.execute("DROP TABLE riido.bench_stage")
        clock.lap("insert documents (to_tsvector)")
    elif "pipeline" in opts:
        for rows in _threaded(_chunks(ordered, chunk, split)):
            clock.lap("python split (not overlapped)")
            with conn.cursor().copy(STAGE_COPY) as cp:
                for r in rows:
                    cp.write_row(r)
            clock.lap("COPY")
            conn.execute(insert, params)
            conn.execute("TRUNCATE riido_stage")
            clock.lap("insert documents (to_tsvector)")
    else:
        rows_all = [(i, d.id, d.text, split(d.text)) for i, d in enumerate(ordered)]
        clock.lap("python split")
        with conn.cursor().copy(STAGE_COPY) as cp:
            for r in rows_all:
                cp.write_row(r)
        clock.lap("COPY")
        conn.execute(insert, params)
        clock.lap("insert documents (to_tsvector)")
    fin = _finalize_sql(opts)
    for col, tsv, length in (("raw", "tsv_raw", "len_raw"), ("ident", "tsv_ident", "len_ident")):
        stmt = sql.SQL(fin).format(tsv=sql.Identifier(tsv), len=sql.Identifier(length))  # type: ignore[arg-type]
        conn.execute(stmt, {"snapshot_id": snapshot_id, "col": col, "k1": K1, "b": B})
        clock.lap(f"finalize {col}")
    conn.execute(sql_text("count_terms"), {"snapshot_id": snapshot_id})
    conn.execute("DROP TABLE riido_stage")
    clock.lap("count terms")


def run_variant(dsn: str, docs: Sequence[Any], opts: set[str]) -> dict[str, Any]:
    from riido_pg.documents import validate_documents
    from riido_pg.store import content_digest

    conn = connect(dsn)
    conn.execute("CHECKPOINT")
    if "inline" in opts:
        conn.execute("ALTER TABLE riido.documents SET (toast_tuple_target = 8160)")
    clock = CpuClock(conn.info.backend_pid)
    checked = validate_documents(docs)
    digest = content_digest(checked, "english")
    clock.lap("python validate+digest")
    with conn.transaction():
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('v', 'english', 'loading', %s, %s, 1.2, 0.75)",
            (len(checked), digest),
        )
        write_variant(conn, "v", checked, opts, clock)
        conn.execute("UPDATE riido.snapshots SET state = 'ready' WHERE snapshot_id = 'v'")
    clock.lap("commit")
    conn.close()
    t = clock.totals()
    return {"seconds": t["wall_s"], "docs_per_s": len(docs) / t["wall_s"], **clock.as_dict()}


def check_equal(dsn: str, docs: Sequence[Any]) -> dict[str, int]:
    """Load the reference snapshot 'ref' and compare it with 'v'; raise on a difference."""
    from riido_pg.store import load_snapshot

    conn = connect(dsn)
    load_snapshot(conn, "ref", docs)
    checks = {
        "documents": """
            SELECT count(*) FROM riido.documents a FULL JOIN riido.documents b
              ON b.snapshot_id = 'ref' AND a.doc_ord = b.doc_ord
            WHERE a.snapshot_id = 'v' AND (b.doc_ord IS NULL OR a.doc_id <> b.doc_id
              OR a.tsv_raw <> b.tsv_raw OR a.tsv_ident <> b.tsv_ident
              OR a.len_raw <> b.len_raw OR a.len_ident <> b.len_ident)""",
        "column_stats": """
            SELECT count(*) FROM riido.column_stats a JOIN riido.column_stats b USING (col)
            WHERE a.snapshot_id = 'v' AND b.snapshot_id = 'ref'
              AND (a.documents <> b.documents OR a.avgdl <> b.avgdl OR a.terms <> b.terms)""",
        "postings_rows": """
            SELECT abs((SELECT count(*) FROM riido.postings WHERE snapshot_id = 'v')
                     - (SELECT count(*) FROM riido.postings WHERE snapshot_id = 'ref'))""",
        "postings": """
            SELECT count(*) FROM riido.postings a JOIN riido.postings b USING (col, lexeme)
            WHERE a.snapshot_id = 'v' AND b.snapshot_id = 'ref'
              AND (a.df <> b.df OR a.idf <> b.idf
                OR (SELECT array_agg(x.o ORDER BY x.o) FROM unnest(a.doc_ords, a.tfn) x(o, t))
                   IS DISTINCT FROM
                   (SELECT array_agg(y.o ORDER BY y.o) FROM unnest(b.doc_ords, b.tfn) y(o, t))
                OR (SELECT array_agg(x.t ORDER BY x.o) FROM unnest(a.doc_ords, a.tfn) x(o, t))
                   IS DISTINCT FROM
                   (SELECT array_agg(y.t ORDER BY y.o) FROM unnest(b.doc_ords, b.tfn) y(o, t)))""",
    }
    out = {name: int(conn.execute(q).fetchone()[0]) for name, q in checks.items()}
    conn.close()
    if any(out.values()):
        raise AssertionError(f"variant output differs from load_snapshot: {out}")
    return out


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--size", type=int, default=20_000)
    p.add_argument("--corpus", choices=("synthetic", "cosqa"), default="synthetic")
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    p.add_argument("--repeat", type=int, default=2, help="runs per variant; the best is kept")
    p.add_argument("--no-check", action="store_true", help="skip the equality check")
    p.add_argument("--tag", default="", help="suffix of the result file name")
    args = p.parse_args()
    if args.quick:
        args.size, args.repeat = 2_000, 1
    docs = corpus.documents(args.corpus, args.size)
    from riido_pg.splitting import split_identifiers

    assert all(original_split(d.text) == split_identifiers(d.text) for d in docs)
    t = time.perf_counter()
    for d in docs:
        original_split(d.text)
    split_s = time.perf_counter() - t
    t = time.perf_counter()
    for d in docs:
        split_identifiers(d.text)
    fast_s = time.perf_counter() - t

    names = args.variants.split(",")
    results: dict[str, Any] = {}
    for rep in range(args.repeat):
        for name in names:  # interleaved, so background noise spreads over all variants
            with bench_database(args.dsn, "variant", keep=args.keep) as dsn:
                r = run_variant(dsn, docs, VARIANTS[name])
                if rep == 0 and not args.no_check:
                    r["check"] = check_equal(dsn, docs)
            r["load_avg"] = os.getloadavg()[0]
            print(
                f"{name:22s} rep {rep}: {r['seconds']:.2f} s  {r['docs_per_s']:,.0f} docs/s",
                file=sys.stderr,
            )
            results.setdefault(name, []).append(r)
    best = {n: min(rs, key=lambda r: r["seconds"]) for n, rs in results.items()}

    # CPU seconds are what the neighbours' load does not change: take the median run's
    def med(rs: list[dict[str, Any]], key: str) -> float:
        vals = sorted(r[key] for r in rs if r.get(key) is not None)
        return vals[len(vals) // 2] if vals else float("nan")

    base_cpu = None
    base_wall = None
    rows = []
    for n, rs in results.items():
        cpu = med(rs, "total_client_cpu_s") + med(rs, "total_server_cpu_s")
        base_cpu = base_cpu or cpu
        base_wall = base_wall or best[n]["seconds"]
        partial = "parallel" in VARIANTS[n]  # the workers' CPU is not counted
        star = "*" if partial else ""
        rows.append(
            [
                n,
                round(best[n]["seconds"], 2),
                round(best[n]["docs_per_s"]),
                f"{base_wall / best[n]['seconds']:.2f}×",
                round(med(rs, "total_client_cpu_s"), 2),
                f"{med(rs, 'total_server_cpu_s'):.2f}{star}",
                f"{cpu:.2f}{star}",
                "–" if partial else round(args.size / cpu),
                "–" if partial else f"{base_cpu / cpu:.2f}×",
            ]
        )
    print(
        f"\n### Load pipeline variants, {args.size:,} {args.corpus} documents "
        f"({args.repeat} runs each; output checked equal to load_snapshot)\n"
    )
    print(
        markdown_table(
            [
                "variant",
                "best wall s",
                "docs/s (wall)",
                "wall speed-up",
                "client CPU s",
                "server CPU s",
                "CPU s total",
                "docs per CPU-s",
                "CPU speed-up",
            ],
            rows,
        )
    )
    if any("parallel" in VARIANTS[n] for n in results):
        print("\n\\* leader backend only: the parallel workers' CPU is not counted")
    steps = list(dict.fromkeys(s for r in best.values() for s in r["wall_s"]))
    srows = []
    for n, r in best.items():

        def cell(r: dict[str, Any], s: str) -> str:
            cpu = (r["client_cpu_s"].get(s) or 0.0) + (r["server_cpu_s"].get(s) or 0.0)
            return f"{r['wall_s'].get(s, 0.0):.2f} / {cpu:.2f}"

        srows.append([n, *(cell(r, s) for s in steps)])
    print("\nper step, best run: wall s / CPU s (client + server backend)\n")
    print(markdown_table(["variant", *steps], srows))
    print(
        f"\nidentifier splitting alone: as first shipped {split_s:.2f} s, "
        f"shipped now {fast_s:.2f} s ({split_s / fast_s:.1f}×)"
    )
    write_results(
        f"load_variants_{args.corpus}_{args.size}{'_' + args.tag if args.tag else ''}",
        {
            "size": args.size,
            "corpus": args.corpus,
            "runs": results,
            "original_split_s": split_s,
            "split_identifiers_s": fast_s,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
