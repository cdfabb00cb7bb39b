"""Bench databases for the top-K prototype (issue 9): one per size, reusable.

``riido_bench_topk_<size>`` holds the CoSQA corpus replicated to ``size`` functions,
loaded with the shipped ``riido_pg.store.load_snapshot`` as snapshot ``bench``.
``ensure_database`` reuses it when it already holds a ready snapshot of that size
(``--reuse``), so a 1,000,000-document run does not pay the load again.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

# corpus.py defaults to /work/shared/data/cosqa-dev; locate it next to the checkout
_COSQA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cosqa-dev"
if "RIIDO_BENCH_COSQA" not in os.environ and (_COSQA / "corpus.jsonl").is_file():
    os.environ["RIIDO_BENCH_COSQA"] = str(_COSQA)

import corpus  # noqa: E402
from common import connect, db_dsn, drop_database  # noqa: E402

SNAPSHOT = "bench"


def dbname_for(size: int) -> str:
    return f"riido_bench_topk_{size}"


def _exists(server_dsn: str, dbname: str) -> bool:
    import psycopg

    with psycopg.connect(server_dsn, autocommit=True) as conn:
        return (
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
            is not None
        )


def _ready(dsn: str, size: int) -> bool:
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT document_count FROM riido.snapshots "
                "WHERE snapshot_id = %s AND state = 'ready'",
                (SNAPSHOT,),
            ).fetchone()
            return bool(row and row[0] == size)
    except psycopg.Error:
        return False


def ensure_database(server_dsn: str, size: int, *, reuse: bool) -> tuple[str, str, dict[str, Any]]:
    """(dbname, dsn, info): a database holding snapshot ``bench`` of ``size`` CoSQA functions."""
    import psycopg
    from psycopg import sql

    from riido_pg import migrate
    from riido_pg.store import load_snapshot

    dbname = dbname_for(size)
    dsn = db_dsn(server_dsn, dbname)
    if reuse and _exists(server_dsn, dbname) and _ready(dsn, size):
        return dbname, dsn, {"reused": True}
    drop_database(server_dsn, dbname)
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    migrate.upgrade(dsn)
    docs = corpus.documents("cosqa", size)
    assert len(docs) == size
    conn = connect(dsn)
    t = time.perf_counter()
    load_snapshot(conn, SNAPSHOT, docs)
    load_s = time.perf_counter() - t
    del docs
    conn.execute("VACUUM ANALYZE riido.postings")
    conn.execute("VACUUM ANALYZE riido.documents")
    conn.close()
    return dbname, dsn, {"reused": False, "load_seconds": round(load_s, 2)}


if __name__ == "__main__":
    import argparse

    from common import DEFAULT_DSN

    p = argparse.ArgumentParser(description="load (or reuse) the top-K bench databases")
    p.add_argument("--dsn", default=os.environ.get("RIIDO_BENCH_DSN", DEFAULT_DSN))
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--drop", action="store_true", help="drop them instead")
    a = p.parse_args()
    for s in (int(x) for x in a.sizes.split(",")):
        if a.drop:
            drop_database(a.dsn, dbname_for(s))
            print(f"dropped {dbname_for(s)}")
        else:
            t = time.perf_counter()
            print(
                s,
                ensure_database(a.dsn, s, reuse=True),
                f"{time.perf_counter() - t:.1f}s",
                flush=True,
            )
