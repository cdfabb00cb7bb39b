"""Ranking SQL variants, timed through ``rank_snapshot`` and checked for equal results.

Not the product. ``bench_query`` showed a one-shot process (statements planned with
their values: psycopg prepares only after five executions) several times slower at
100,000 documents than a long-lived connection. ``EXPLAIN`` showed why: with the
values known, the planner estimated ``scored`` at ~10 rows and the zero-score tail
at ~N/10 rows, so it joined the ranked list to ``riido.documents`` with a hash join
that read the whole snapshot's documents (~35 ms at 100,000) to name 100 rows.

This script swaps the text of ``sql/rank.sql`` inside ``riido_pg.ranking`` (a
monkeypatch of its ``sql_text``; no file is changed) and runs every policy with
``prepare_threshold=None`` (the one-shot path) and with the default (long-lived):

``current``
    ``sql/rank.sql`` as shipped (since commit 5927ecf: ids by a scalar subquery per
    ranked row).
``join``
    the same CTEs with the first shipped final ``JOIN riido.documents`` (the plan
    above).
``current+work_mem``
    the shipped SQL with ``SET work_mem = '32MB'`` on the session: at the 4 MB
    default the largest rankings spill the unnest, the sort and the materialized
    CTE to temporary files.
``page``
    that join behind a ``page`` CTE, ``SELECT ... FROM ranked LIMIT %(limit)s``. It
    never removes a row (``top`` and ``zeros`` together hold at most ``limit`` rows)
    but tells the planner so: with ``limit`` known it expects at most 100 rows and
    uses primary-key lookups; with ``limit`` NULL (the full ranking) LIMIT NULL is
    no limit and the hash join stays.

Every result of a variant is compared with ``current`` (ids, ranks, scores), for
``limit=100`` and for three full rankings (``limit=None``, timed too). For two
queries it also prints ``EXPLAIN ANALYZE`` times of each statement
``identifier_bm25_baseline_first`` runs (two ``rank.sql``, two ``scores.sql``).

    python bench/query_variants.py                   # 100,000 cosqa documents
    python bench/query_variants.py --quick
"""

from __future__ import annotations

import os
import random
import sys
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
    summary_ms,
    write_results,
)

from riido_pg.ranking import POLICIES

LIMIT = 100

_JOIN_SELECT = """
SELECT r.doc_ord, d.doc_id, r.score
FROM ranked AS r
JOIN riido.documents AS d ON d.snapshot_id = %(snapshot_id)s AND d.doc_ord = r.doc_ord
ORDER BY r.part, r.score DESC, r.doc_ord
"""
_PAGE = """,
page AS (
    -- never truncates (top and zeros hold at most %(limit)s rows together); it only
    -- tells the planner so, which makes it name the rows by primary-key lookups
    SELECT doc_ord, score, part FROM ranked
    LIMIT %(limit)s
)
SELECT r.doc_ord, d.doc_id, r.score
FROM page AS r
JOIN riido.documents AS d ON d.snapshot_id = %(snapshot_id)s AND d.doc_ord = r.doc_ord
ORDER BY r.part, r.score DESC, r.doc_ord
"""


def rank_variants() -> dict[str, str]:
    """``current`` (the shipped file), ``join`` (its CTEs with the first shipped final
    join to riido.documents) and ``page`` (that join behind a LIMIT-only CTE)."""
    from riido_pg.resources import sql_text

    current = sql_text("rank")
    out = {"current": current}
    start = current.find("ranked AS (")
    end = current.find("\n)\n", start)
    if start < 0 or end < 0:
        print(
            "sql/rank.sql has no 'ranked' CTE any more; only 'current' is measured", file=sys.stderr
        )
        return out
    head = current[: end + 2]
    out["join"] = head + _JOIN_SELECT
    out["page"] = head.rstrip("\n") + _PAGE
    return out


def patched(rank_text: str) -> Any:
    """A context manager making riido_pg.ranking use ``rank_text`` for sql/rank.sql."""
    import contextlib

    import riido_pg.ranking as ranking
    from riido_pg.resources import sql_text

    @contextlib.contextmanager
    def cm() -> Any:
        original = ranking.sql_text
        ranking.sql_text = lambda name: rank_text if name == "rank" else sql_text(name)  # type: ignore[assignment]
        try:
            yield
        finally:
            ranking.sql_text = original  # type: ignore[assignment]

    return cm()


def _key(r: Any) -> tuple[str, list[tuple[str, int, float, float | None]]]:
    return r.policy, [(c.id, c.rank, c.bm25_score, c.identifier_bm25_score) for c in r.candidates]


def statement_breakdown(conn: Any, snap: str, n: int, query: str) -> dict[str, float]:
    """EXPLAIN ANALYZE (custom plans) of the statements baseline-first runs."""
    from riido_pg.ranking import query_terms
    from riido_pg.resources import sql_text

    def explain(text: str, params: dict[str, Any]) -> float:
        rows = conn.execute("EXPLAIN (ANALYZE) " + text, params, prepare=False).fetchall()
        return next(
            float(r[0].split(":")[1].split()[0]) for r in rows if r[0].startswith("Execution Time")
        )

    t = query_terms(conn, query, "english")
    out: dict[str, float] = {}
    tops: dict[str, list[int]] = {}
    for col, lex in (("raw", t.raw), ("ident", t.ident)):
        p = {"snapshot_id": snap, "col": col, "lexemes": lex, "n": n, "limit": LIMIT}
        tops[col] = [r[0] for r in conn.execute(sql_text("rank"), p, prepare=False).fetchall()]
        for name, text in VARIANTS.items():
            _apply(conn, name)
            out[f"rank.sql {col} ({name})"] = explain(text, p)
            conn.execute("RESET work_mem")
    for col, lex, other in (("raw", t.raw, "ident"), ("ident", t.ident, "raw")):
        missing = [o for o in tops[other] if o not in set(tops[col])]
        out[f"scores.sql {col} ({len(missing)} ords)"] = explain(
            sql_text("scores"),
            {"snapshot_id": snap, "col": col, "lexemes": lex, "doc_ords": missing},
        )
    return out


VARIANTS: dict[str, str] = {}
#: session settings of a variant (the shipped SQL with more work_mem: at the 4 MB
#: default the largest rankings spill their unnest, sort and CTE to temp files)
SETTINGS: dict[str, dict[str, str]] = {"current+work_mem": {"work_mem": "32MB"}}


def _apply(conn: Any, name: str) -> None:
    from psycopg import sql

    for key, value in SETTINGS.get(name, {}).items():
        conn.execute(sql.SQL("SET {} = {}").format(sql.Identifier(key), sql.Literal(value)))


def main() -> None:
    p = base_parser(__doc__ or "")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--corpus", choices=("synthetic", "cosqa"), default="cosqa")
    args = p.parse_args()
    if args.quick:
        args.size, args.queries = 2_000, 20
    kind = args.corpus if corpus.cosqa_available() else "synthetic"
    from riido_pg.ranking import rank_snapshot
    from riido_pg.store import load_snapshot

    VARIANTS.update(rank_variants())
    VARIANTS["current+work_mem"] = VARIANTS["current"]
    docs = corpus.documents(kind, args.size)
    ids = [d.id for d in docs]
    queries = corpus.queries(kind, args.queries)
    rng = random.Random("qv-hints")
    hints = [rng.sample(ids, 20) for _ in queries]
    results: dict[str, Any] = {}
    mismatches = 0
    with bench_database(args.dsn, "qvar", keep=args.keep) as dsn:
        conn = connect(dsn)
        load_snapshot(conn, "bench", docs)
        conn.execute("VACUUM ANALYZE riido.postings")
        conn.execute("VACUUM ANALYZE riido.documents")
        reference: dict[tuple[str, int], Any] = {}
        for mode in ("unprepared", "prepared"):
            for name, text in VARIANTS.items():
                qconn = connect(dsn)
                _apply(qconn, name)
                qconn.prepare_threshold = None if mode == "unprepared" else 5
                with patched(text):
                    for policy in POLICIES:

                        def call(i: int, policy: str = policy, qconn: Any = qconn) -> Any:
                            h = hints[i] if policy == "external_hints_baseline_first" else None
                            return rank_snapshot(
                                qconn, "bench", queries[i], policy=policy, limit=LIMIT, hints=h
                            )

                        for i in range(min(10, len(queries))):
                            call(i)
                        times = []
                        for i in range(len(queries)):
                            t0 = time.perf_counter()
                            r = call(i)
                            times.append(time.perf_counter() - t0)
                            k = _key(r)
                            ref = reference.setdefault((policy, i), k)
                            if k != ref:
                                mismatches += 1
                        s = summary_ms(times)
                        results[f"{mode}/{name}/{policy}"] = s
                        print(
                            f"{mode:10s} {name:8s} {policy:34s} p50 {s['p50_ms']:7.2f} ms "
                            f"p95 {s['p95_ms']:7.2f} ms",
                            file=sys.stderr,
                        )
                qconn.close()
        # the full ranking (limit None, as eval uses it) must not get slower or differ
        full: dict[str, float] = {}
        full_ref: list[Any] = []
        for name, text in VARIANTS.items():
            qconn = connect(dsn)
            _apply(qconn, name)
            qconn.prepare_threshold = None
            with patched(text):
                ts = []
                for i in range(5):
                    t0 = time.perf_counter()
                    r = rank_snapshot(qconn, "bench", queries[i], policy="bm25")
                    ts.append(time.perf_counter() - t0)
                    k = _key(r)
                    if len(full_ref) <= i:
                        full_ref.append(k)
                    elif k != full_ref[i]:
                        mismatches += 1
            full[name] = sorted(ts)[2] * 1000
            qconn.close()
        heavy = "how to return the type of an object in python"  # Σ df ≈ 98,000 at 100k
        picks = [queries[0], queries[len(queries) // 2]]
        if kind == "cosqa":
            picks.append(heavy)
        breakdown = {q: statement_breakdown(conn, "bench", args.size, q) for q in picks}
        conn.close()
    rows = []
    for mode in ("unprepared", "prepared"):
        for policy in POLICIES:
            row: list[Any] = [mode, policy]
            for name in VARIANTS:
                s = results[f"{mode}/{name}/{policy}"]
                row += [s["p50_ms"], s["p95_ms"]]
            rows.append(row)
    print(
        f"\n### rank.sql variants, {args.size:,} {kind} documents, {len(queries)} queries, "
        f"limit {LIMIT} (results identical to current: {'yes' if mismatches == 0 else 'NO'})\n"
    )
    print(
        markdown_table(
            ["statements", "policy", *(f"{n} {m}" for n in VARIANTS for m in ("p50 ms", "p95 ms"))],
            rows,
        )
    )
    print(
        "\nfull ranking (limit None, bm25, unprepared), median of 5 queries: "
        + ", ".join(f"{n} {v:.1f} ms" for n, v in full.items())
    )
    for q, b in breakdown.items():
        print(f"\nEXPLAIN ANALYZE, custom plans, baseline-first statements for {q!r}:\n")
        print(markdown_table(["statement", "execution ms"], [[k, v] for k, v in b.items()]))
    write_results(
        "query_variants",
        {
            "size": args.size,
            "corpus": kind,
            "queries": len(queries),
            "mismatches": mismatches,
            "results": results,
            "full_ranking_ms": full,
            "breakdown": breakdown,
            "load_avg": os.getloadavg()[0],
            "variants_sql": VARIANTS,
            "settings": SETTINGS,
        },
        args.out,
    )
    if mismatches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
