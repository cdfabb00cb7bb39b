"""A parallel load read in many chunks (README "Loading at size"): its workers look up
which texts are stored, count the base sample and store the new texts in batches,
while the client's one ``COPY`` takes every pair. With the chunk, the sample and the
batch shrunk so that a few dozen documents span many of each, a parallel load stores
exactly the rows a load on one connection stores, and ranks the same; an input that
fails late, or a text a worker cannot index, leaves no half snapshot and nothing
else behind."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from psycopg import sql
from support.database import Database

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.errors import InvalidInput
from riido_pg.storage import staging, workers

WORDS = "read write config file parse json http server client get set value key".split()
QUERIES = ["read config", "http server json", "get value key", "zzz"]


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staging, "CHUNK", 7)
    monkeypatch.setattr(staging, "SAMPLED_CHUNKS", 2)
    monkeypatch.setattr(workers, "BATCH", 5)


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))


def _base(tag: str, n: int = 60) -> dict[str, str]:
    """A repository of ``n`` documents whose ids start with ``tag`` (each test its own:
    the module's tests share a database, and a load picks its base among them all)."""
    rng = random.Random(1)
    return {f"{tag}{i:03d}": _text(rng) + f" f{i}" for i in range(n)}


def _commit(docs: dict[str, str], seed: int) -> dict[str, str]:
    """A commit: a sixteenth of the documents edited, as many removed, a sixth added,
    spread over every chunk (within the bounds a base allows); one new text repeated
    in two far-apart chunks."""
    rng = random.Random(seed)
    out = dict(docs)
    ids = sorted(out)
    for i in rng.sample(range(len(ids)), len(ids) // 8):
        if i % 2:
            out[ids[i]] = out[ids[i]] + f" edited {seed}"
        else:
            del out[ids[i]]
    for j in range(len(ids) // 6):
        out[f"g{seed}-{j:02d}"] = _text(rng) + f" new {seed} {j}"
    out[f"g{seed}-twin"] = out[f"g{seed}-00"]
    return out


def _documents(docs: dict[str, str]) -> list[Document]:
    return [Document(k, v) for k, v in sorted(docs.items(), key=lambda kv: kv[0][::-1])]


#: The last segment of the path of the snapshot named by the parameter: its own.
OWN = sql.SQL(
    "(SELECT p.segment_id FROM riido.snapshot_segments AS p WHERE p.snapshot_id = %s "
    "ORDER BY p.position DESC LIMIT 1)"
)


def _rows(db: Database, snapshot: str) -> dict[str, Any]:
    """Everything stored for ``snapshot`` but ids that differ per load (its segment's
    uuid, its creation time): its row, its own segment's documents and postings."""
    with db.connect() as conn:
        row = conn.execute(
            "SELECT document_count, content_digest, base, added, removed, len_raw, len_ident, "
            "text_config FROM riido.snapshots WHERE snapshot_id = %s",
            (snapshot,),
        ).fetchone()
        segment = conn.execute(
            sql.SQL(
                "SELECT g.first_ord, g.documents, g.len_raw, g.len_ident "
                "FROM riido.segments AS g WHERE g.segment_id = {own}"
            ).format(own=OWN),
            (snapshot,),
        ).fetchall()
        documents = conn.execute(
            sql.SQL(
                "SELECT d.doc_ord, d.doc_id, d.text_key FROM riido.documents AS d "
                "WHERE d.segment_id = {own} ORDER BY d.doc_ord"
            ).format(own=OWN),
            (snapshot,),
        ).fetchall()
        postings = conn.execute(
            sql.SQL(
                "SELECT o.col, o.lexeme, o.doc_ords, o.tfs, o.dls, o.gone "
                "FROM riido.postings AS o WHERE o.segment_id = {own} ORDER BY o.col, o.lexeme"
            ).format(own=OWN),
            (snapshot,),
        ).fetchall()
    return {"row": row, "segment": segment, "documents": documents, "postings": postings}


def _rankings(db: Database, snapshot: str) -> list[Any]:
    with db.connect() as conn:
        return [
            [c.to_dict() for c in rank_snapshot(conn, snapshot, q, limit=None).candidates]
            for q in QUERIES
        ]


def _clean(db: Database) -> tuple[int, int, int]:
    """Texts no document references, pending keys, staged documents."""
    with db.connect() as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM riido.texts AS t WHERE NOT EXISTS "
            "(SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)), "
            "(SELECT count(*) FROM riido.text_pending), (SELECT count(*) FROM riido.load_stage)"
        ).fetchone()
    assert row is not None
    return (int(row[0]), int(row[1]), int(row[2]))


@pytest.mark.parametrize("seed", [3, 4])
def test_a_parallel_load_in_many_chunks_stores_what_one_connection_stores(
    db: Database, seed: int
) -> None:
    base = _base(f"s{seed}-")
    docs = _commit(base, seed)
    p, a, f, b = f"parallel{seed}", f"alone{seed}", f"fresh{seed}", f"base{seed}"
    with db.connect() as conn:
        load_snapshot(conn, b, _documents(base), jobs=2)
        # parallel first: the one-connection load then finds its new texts stored,
        # so the texts the parallel load stored are checked against the same keys
        parallel = load_snapshot(conn, p, _documents(docs), jobs=2)
        alone = load_snapshot(conn, a, _documents(docs), jobs=1, base=b)
    assert (parallel.base, alone.base) == (b, b)  # the sample found it
    assert parallel.added == alone.added > 10  # spread over several chunks and batches
    assert _rows(db, p) == _rows(db, a)
    assert _rankings(db, p) == _rankings(db, a)
    with db.connect() as conn:
        fresh = load_snapshot(conn, f, _documents(docs), jobs=2, fresh=True)
    assert fresh.base is None
    assert _rankings(db, p) == _rankings(db, f)
    assert _clean(db) == (0, 0, 0)


def _failing(docs: list[Document], at: int) -> Iterator[Document]:
    """``docs``, with item ``at``'s text holding a NUL: the load fails reading it."""
    for i, doc in enumerate(docs):
        yield doc if i != at else Document(doc.id, "a NUL \x00 here")


@pytest.mark.parametrize("at", [3, 40, 66])
def test_a_parallel_load_failing_late_leaves_nothing(db: Database, at: int) -> None:
    base = _base(f"a{at}-")
    docs = _documents(_commit(base, 5))
    broken = f"broken{at}"
    with db.connect() as conn:
        load_snapshot(conn, f"base-{broken}", _documents(base), jobs=2)
    before = db.counts()
    with db.connect() as conn, pytest.raises(InvalidInput, match=rf"documents\[{at}\].*NUL"):
        load_snapshot(conn, broken, _failing(docs, at), jobs=2)
    assert db.counts() == before
    assert _clean(db) == (0, 0, 0)
    with db.connect() as conn:  # and the same content loads afterwards
        assert load_snapshot(conn, broken, docs, jobs=2).base == f"base-{broken}"
        load_snapshot(conn, f"{broken}-fresh", docs, jobs=1, fresh=True)
    assert _rankings(db, broken) == _rankings(db, f"{broken}-fresh")
    assert _clean(db) == (0, 0, 0)


def test_a_text_a_worker_cannot_index_fails_the_load_and_leaves_nothing(db: Database) -> None:
    base = _base("long-")
    docs = _commit(base, 6)
    docs["g6-long"] = "x" * 3_000  # a word PostgreSQL cannot index, in a later batch
    with db.connect() as conn:
        load_snapshot(conn, "base-long", _documents(base), jobs=2)
    before = db.counts()
    with db.connect() as conn, pytest.raises(InvalidInput, match="'g6-long' has a word"):
        load_snapshot(conn, "long", _documents(docs), jobs=2)
    assert db.counts() == before
    assert _clean(db) == (0, 0, 0)
