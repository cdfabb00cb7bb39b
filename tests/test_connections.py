"""Every public function and every façade method, on the connections a Python caller
has (README "Python API"): an idle connection that is not in autocommit, one inside
a transaction, one in a failed transaction, and a SQLAlchemy connection (and
session). Each call either works -- its work committed when it returns, or with the
caller's transaction, as documented -- or raises one RiidoError before touching
anything, and leaves the caller's transaction as it was."""

from __future__ import annotations

import inspect
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy
from psycopg.pq import TransactionStatus
from sqlalchemy.orm import Session
from support.database import Database as ModuleDb

import riido_pg
from riido_pg import (
    Database,
    Document,
    RankRequest,
    RiidoError,
    Table,
    TransactionFailed,
    TransactionInProgress,
)
from riido_pg.documents import DocumentSet

DOCS = [Document("a", "def read_config(path): ..."), Document("b", "def writeConfig(data): ...")]
KINDS = ("idle", "transaction", "failed", "sqlalchemy", "session")


@dataclass(frozen=True)
class Op:
    """One public call: ``run(conn, name, tmp)`` with a fresh ``name`` to write; what
    it ``writes`` (a snapshot id made from ``name``, or None for a read); whether it
    ``commits`` on its own (refused inside a transaction)."""

    run: Callable[[Any, str, Path], object]
    writes: Callable[[str], str] | None = None
    drops: bool = False
    commits: bool = False


def _beir(tmp: Path, name: str) -> Path:
    root = tmp / name
    (root / "qrels").mkdir(parents=True)
    corpus = [{"_id": "a", "text": f"read config {name}"}, {"_id": "b", "text": "write data"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "read config"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\ta\t1\n")
    return root


def _evaluated(conn: Any, name: str, tmp: Path) -> object:
    done = Database(conn).evaluate(_beir(tmp, name), policies=["bm25"])
    _EVALUATED[name] = done.snapshot_id
    return done


_EVALUATED: dict[str, str] = {}

FUNCTIONS: dict[str, Op] = {
    "load_snapshot": Op(lambda c, n, _: riido_pg.load_snapshot(c, n, DOCS), writes=str),
    "load_snapshot parallel": Op(
        lambda c, n, _: riido_pg.load_snapshot(c, n, DOCS, jobs=2), writes=str, commits=True
    ),
    "load_snapshot_from_table": Op(
        lambda c, n, _: riido_pg.load_snapshot_from_table(c, n, "public.src", "id", "text"),
        writes=str,
    ),
    "drop_snapshot": Op(lambda c, n, _: riido_pg.drop_snapshot(c, n), writes=str, drops=True),
    "get_snapshot": Op(lambda c, n, _: riido_pg.get_snapshot(c, "base")),
    "list_snapshots": Op(lambda c, n, _: riido_pg.list_snapshots(c)),
    "rank_snapshot": Op(lambda c, n, _: riido_pg.rank_snapshot(c, "base", "read config")),
    "rank_documents": Op(
        lambda c, n, _: riido_pg.rank_documents(c, RankRequest("x", "read", DocumentSet(DOCS)))
    ),
}
METHODS: dict[str, Op] = {
    "load": Op(lambda c, n, _: Database(c).load(n, DOCS), writes=str),
    "load a file": Op(lambda c, n, t: Database(c).load(n, _jsonl(t, n)), writes=str),
    "load a table": Op(lambda c, n, _: Database(c).load(n, Table("src")), writes=str),
    "load parallel": Op(
        lambda c, n, _: Database(c).load(n, DOCS, jobs=2), writes=str, commits=True
    ),
    "get": Op(lambda c, n, _: Database(c).get("base")),
    "snapshots": Op(lambda c, n, _: Database(c).snapshots()),
    "drop": Op(lambda c, n, _: Database(c).drop(n), writes=str, drops=True),
    "move": Op(lambda c, n, _: Database(c).move("base", "nowhere"), commits=True),
    "rank": Op(lambda c, n, _: Database(c).rank("base", "read config", limit=1)),
    "search": Op(lambda c, n, _: Database(c).search("base", "read config", policy="bm25", limit=1)),
    "rank_documents": Op(
        lambda c, n, _: Database(c).rank_documents(RankRequest("x", "read", DocumentSet(DOCS)))
    ),
    "evaluate": Op(_evaluated, writes=lambda n: _EVALUATED[n]),
    "add_shard": Op(lambda c, n, _: Database(c).add_shard("Bad Name", "host=x"), commits=True),
    "shards": Op(lambda c, n, _: Database(c).shards()),
    "remove_shard": Op(lambda c, n, _: Database(c).remove_shard("nowhere")),
    "upgrade_shards": Op(lambda c, n, _: Database(c).upgrade_shards()),
    "grant_reader": Op(lambda c, n, _: Database(c).grant_reader("riido_t_conn_reader")),
}
#: Calls whose outcome on a usable connection is an error by design (no such shard, a
#: bad shard name): the point is that it is one RiidoError, raised before any work.
REFUSED = {"move", "add_shard", "remove_shard"}


def _jsonl(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in DOCS))
    return path


def test_every_public_function_and_method_is_covered() -> None:
    takes_connection = {
        name
        for name in riido_pg.__all__
        if inspect.isfunction(obj := getattr(riido_pg, name))
        and next(iter(inspect.signature(obj).parameters), "") == "conn"
    }
    assert takes_connection == {n.split()[0] for n in FUNCTIONS}
    methods = {n for n, _ in inspect.getmembers(Database, inspect.isfunction) if n[0] != "_"}
    assert methods - {"close"} == {n.split()[0] for n in METHODS}


@pytest.fixture(scope="module", autouse=True)
def prepared(db: ModuleDb) -> Iterator[None]:
    with db.connect() as conn:
        riido_pg.load_snapshot(conn, "base", DOCS)
        conn.execute("CREATE TABLE public.src (id text, text text)")
        conn.execute("INSERT INTO public.src VALUES ('a', 'read config'), ('b', 'write')")
        conn.execute("DROP ROLE IF EXISTS riido_t_conn_reader")
        conn.execute("CREATE ROLE riido_t_conn_reader")
    yield
    with db.connect() as conn:
        conn.execute("DROP OWNED BY riido_t_conn_reader")
        conn.execute("DROP ROLE riido_t_conn_reader")


def _visible(db: ModuleDb) -> set[str]:
    with db.connect() as conn:
        rows = conn.execute("SELECT snapshot_id FROM riido.snapshots").fetchall()
    return {str(r[0]) for r in rows}


@contextmanager
def _connection(db: ModuleDb, kind: str) -> Iterator[tuple[Any, Callable[[], None]]]:
    """The caller's connection of ``kind`` and its commit."""
    if kind in ("sqlalchemy", "session"):
        engine = sqlalchemy.create_engine(
            "postgresql+psycopg://", creator=lambda: psycopg.connect(db.dsn)
        )
        try:
            if kind == "session":
                with Session(engine) as session:
                    yield session, session.commit
            else:
                with engine.connect() as sa:
                    yield sa, sa.commit
        finally:
            engine.dispose()
        return
    with psycopg.connect(db.dsn) as conn:
        if kind == "transaction":
            conn.execute("CREATE TEMP TABLE caller_work (x int)")
            conn.execute("INSERT INTO caller_work VALUES (1)")
        elif kind == "failed":
            with pytest.raises(psycopg.errors.DivisionByZero):
                conn.execute("SELECT 1 / 0")
        yield conn, conn.commit


CASES = [
    (name, op, kind)
    for table in (FUNCTIONS, METHODS)
    for name, op in table.items()
    for kind in KINDS
]


@pytest.mark.parametrize(("name", "op", "kind"), CASES, ids=[f"{n}-{k}" for n, _, k in CASES])
def test_public_call_on_a_callers_connection(
    db: ModuleDb, tmp_path: Path, name: str, op: Op, kind: str
) -> None:
    snap = f"{name.replace(' ', '_')}-{kind}-{uuid.uuid4().hex[:6]}"
    if op.drops:
        with db.connect() as conn:
            riido_pg.load_snapshot(conn, snap, DOCS)
    before = db.counts()
    inside = kind in ("transaction", "sqlalchemy", "session")
    with _connection(db, kind) as (conn, commit):
        if kind == "failed":
            with pytest.raises(TransactionFailed, match="roll it back first"):
                op.run(conn, snap, tmp_path)
            assert db.counts() == before
            assert conn.info.transaction_status == TransactionStatus.INERROR
            return
        if op.commits and inside:
            with pytest.raises(TransactionInProgress, match="nothing was done"):
                op.run(conn, snap, tmp_path)
            assert db.counts() == before
            _caller_unharmed(conn, kind)
            return
        try:
            op.run(conn, snap, tmp_path)
        except RiidoError:
            assert name in REFUSED, name
            assert db.counts() == before
            _caller_unharmed(conn, kind)
            return
        _caller_unharmed(conn, kind)
        if op.writes is None:
            return
        wrote = op.writes(snap)
        # inside the caller's transaction the work waits for the caller's commit
        assert (wrote in _visible(db)) == (op.drops if inside else not op.drops)
        commit()
    assert (wrote in _visible(db)) != op.drops


def _caller_unharmed(conn: Any, kind: str) -> None:
    """The caller's connection as the caller left it: idle and not in autocommit, or
    in its transaction with the work done before the call."""
    if kind == "idle":
        assert conn.autocommit is False
        assert conn.info.transaction_status == TransactionStatus.IDLE
    elif kind == "transaction":
        assert conn.info.transaction_status == TransactionStatus.INTRANS
        row = conn.execute("SELECT count(*) FROM caller_work").fetchone()
        assert row == (1,)
