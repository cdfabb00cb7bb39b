"""Content-addressed texts shared between snapshots (README "Loading at size"): a
snapshot that reuses another's texts ranks exactly like the same content loaded into
an empty database, under every policy; one connection or several give the same
postings and rankings; dropping a sharing snapshot breaks nothing and leaves no
unreferenced text; and migration 0006 goes down and up again with data in place."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql
from support.corpus import WORDS, small, stdlib_functions
from support.database import Database, create_database, drop_database

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.evaluation.corpora import corpus_info, store_corpus
from riido_pg.ranking import policies
from riido_pg.server import migrate
from riido_pg.splitting import SPLITTER_VERSION
from riido_pg.storage import drop_snapshot, text_key

REGISTRY = {p.name: p for p in policies()}

QUERIES = [
    "read config file sections",
    "quote a shell word",
    "decode a json string",
    "glob pattern to regex",
    "ReadConfig getHTTPResponseCode",
    "the of and",
]
#: Every policy that needs no learned model; the hints policies get HINTS.
POLICIES = [p for p in REGISTRY.values() if not p.needs_model]
UNREFERENCED = (
    "SELECT count(*) FROM riido.texts AS t "
    "WHERE NOT EXISTS (SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)"
)

Rankings = dict[tuple[str, str], list[tuple[Any, ...]]]


def _rankings(conn: Any, snapshot: str, docs: list[Document], queries: list[str]) -> Rankings:
    """The full ranking (limit=None) of every query under every policy: ids, ranks and
    every score as stored floats."""
    hints = [d.id for d in docs[:: max(1, len(docs) // 5)]][:5]
    out: Rankings = {}
    for policy in POLICIES:
        for q in queries:
            ranking = rank_snapshot(
                conn,
                snapshot,
                q,
                policy=policy.name,
                limit=None,
                hints=hints if policy.needs_hints else None,
            )
            assert ranking.total == len(docs)
            out[(policy.name, q)] = [
                (c.id, c.rank, c.bm25_score, c.identifier_bm25_score, c.score)
                for c in ranking.candidates
            ]
    return out


def _rows(conn: Any, query: str, snapshot: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in conn.execute(query, (snapshot,))]


#: The documents a snapshot holds: its path's, less those it removed.
HELD = (
    "held AS (SELECT d.doc_ord, d.doc_id, d.text_key FROM riido.snapshot_segments AS p "
    "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
    "JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id "
    "WHERE p.snapshot_id = %(s)s AND NOT d.doc_ord = ANY(s.removed))"
)


def _postings(conn: Any, snapshot: str) -> list[tuple[Any, ...]]:
    """The postings a snapshot ranks over, whatever segments hold them: per column
    and lexeme, its documents' ids, term frequencies and lengths, in id order."""
    return [
        tuple(r)
        for r in conn.execute(
            sql.SQL(
                "WITH {} SELECT x.col, x.lexeme, array_agg(h.doc_id ORDER BY h.doc_id), "
                "array_agg(x.tf ORDER BY h.doc_id), array_agg(x.dl ORDER BY h.doc_id) "
                "FROM (SELECT p.col, p.lexeme, u.o, u.tf, u.dl FROM riido.postings AS p "
                "JOIN riido.snapshot_segments AS g ON g.segment_id = p.segment_id "
                "CROSS JOIN LATERAL unnest(p.doc_ords, p.tfs, p.dls) AS u(o, tf, dl) "
                "WHERE g.snapshot_id = %(s)s) AS x JOIN held AS h ON h.doc_ord = x.o "
                "GROUP BY x.col, x.lexeme ORDER BY x.col, x.lexeme"
            ).format(sql.SQL(HELD)),
            {"s": snapshot},
        )
    ]


def _documents(conn: Any, snapshot: str) -> list[tuple[Any, ...]]:
    """The (id, text key) of every document the snapshot holds, in id order."""
    return [
        tuple(r)
        for r in conn.execute(
            sql.SQL("WITH {} SELECT doc_id, text_key FROM held ORDER BY doc_id").format(
                sql.SQL(HELD)
            ),
            {"s": snapshot},
        )
    ]


def _needed(conn: Any) -> int:
    """The texts some snapshot still needs: those of the documents of every segment a
    snapshot's path holds (a base's removed documents included)."""
    return int(
        _one(
            conn,
            "SELECT count(DISTINCT d.text_key) FROM riido.documents AS d WHERE EXISTS "
            "(SELECT 1 FROM riido.snapshot_segments AS p WHERE p.segment_id = d.segment_id)",
        )
    )


def _one(conn: Any, query: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _texts(conn: Any) -> tuple[int, int, int]:
    """(texts, unreferenced texts, pending rows)."""
    return (
        int(_one(conn, "SELECT count(*) FROM riido.texts")),
        int(_one(conn, UNREFERENCED)),
        int(_one(conn, "SELECT count(*) FROM riido.text_pending")),
    )


def _next_commit(docs: list[Document]) -> list[Document]:
    """``docs`` with about 5% of the documents changed, removed or added."""
    out = [d for i, d in enumerate(docs) if i % 60 != 1]  # removed
    out = [Document(d.id, d.text + "\n# changed") if i % 50 == 3 else d for i, d in enumerate(out)]
    return out + [
        Document(f"zz/new:{i}", f"def added_{i}(path):\n    return read_config(path, {i})")
        for i in range(6)
    ]


@pytest.fixture(scope="module")
def commits() -> tuple[list[Document], list[Document]]:
    a = stdlib_functions(400)
    return a, _next_commit(a)


def test_keys_are_the_documented_hash() -> None:
    h = hashlib.sha256(b"riido-pg/text\0" + str(SPLITTER_VERSION).encode() + b"\0english\0x y")
    assert text_key("x y", "english").bytes == h.digest()[:16]
    assert text_key("x y", "english") != text_key("x y", "simple")
    assert text_key("x y", "english") != text_key("x  y", "english")


def test_reuse_ranks_like_a_fresh_load(
    db: Database, commits: tuple[list[Document], list[Document]]
) -> None:
    a, b = commits
    shared = {d.text for d in a} & {d.text for d in b}
    assert len(shared) > 0.9 * len({d.text for d in b})
    with db.connect() as conn:
        assert _texts(conn) == (0, 0, 0)
        # B alone, into an empty database, on one connection
        load_snapshot(conn, "b-fresh", b, jobs=1)
        fresh = _rankings(conn, "b-fresh", b, QUERIES)
        fresh_postings = _postings(conn, "b-fresh")
        fresh_documents = _documents(conn, "b-fresh")
        assert _texts(conn) == (len({d.text for d in b}), 0, 0)
        drop_snapshot(conn, "b-fresh")
        assert _texts(conn) == (0, 0, 0)

        # A, then B reusing A's texts
        load_snapshot(conn, "a", a, jobs=2)
        a_ranked = _rankings(conn, "a", a, QUERIES)
        stamps = dict(conn.execute("SELECT key, xmin::text FROM riido.texts").fetchall())
        assert load_snapshot(conn, "b", b, jobs=2).base == "a"  # on a base: its difference
        assert _texts(conn) == (len({d.text for d in a} | {d.text for d in b}), 0, 0)
        # the shared texts were not written again
        after = dict(conn.execute("SELECT key, xmin::text FROM riido.texts").fetchall())
        reused = {text_key(t, "english") for t in shared}
        assert {k: after[k] for k in reused} == {k: stamps[k] for k in reused}
        assert _rankings(conn, "b", b, QUERIES) == fresh
        assert _postings(conn, "b") == fresh_postings
        assert _documents(conn, "b") == fresh_documents

        # dropping one of the two sharing snapshots leaves the other as it was; b's
        # path still holds a's segment, so every text of it stays
        drop_snapshot(conn, "a")
        assert _rankings(conn, "b", b, QUERIES) == fresh
        assert _texts(conn) == (_needed(conn), 0, 0)
        assert _needed(conn) == len({d.text for d in a} | {d.text for d in b})
        assert load_snapshot(conn, "a", a, jobs=1).base == "b"
        drop_snapshot(conn, "b")
        assert _rankings(conn, "a", a, QUERIES) == a_ranked
        assert _texts(conn) == (_needed(conn), 0, 0)
        drop_snapshot(conn, "a")
        assert _texts(conn) == (0, 0, 0)

        # B alone again, on two connections: the same as on one
        load_snapshot(conn, "b-two", b, jobs=2)
        assert _rankings(conn, "b-two", b, QUERIES) == fresh
        assert _postings(conn, "b-two") == fresh_postings
        drop_snapshot(conn, "b-two")
        assert _texts(conn) == (0, 0, 0)


def test_replace_keeps_shared_texts_and_collects_the_rest(
    db: Database, commits: tuple[list[Document], list[Document]]
) -> None:
    a, b = commits
    with db.connect() as conn:
        load_snapshot(conn, "r-a", a, jobs=2)
        load_snapshot(conn, "r-b", b, jobs=1)
        expected = _rankings(conn, "r-b", b, QUERIES)
        for jobs in (1, 2):
            # r-a becomes B, then A again: every text is still someone's
            assert load_snapshot(conn, "r-a", b, replace=True, jobs=jobs).action == "replaced"
            assert _rankings(conn, "r-a", b, QUERIES) == expected
            assert _texts(conn) == (_needed(conn), 0, 0)
            load_snapshot(conn, "r-a", a, replace=True, jobs=jobs)
            assert _texts(conn) == (_needed(conn), 0, 0)
        assert _needed(conn) <= len({d.text for d in a} | {d.text for d in b})
        assert _rankings(conn, "r-b", b, QUERIES) == expected
        drop_snapshot(conn, "r-a")
        drop_snapshot(conn, "r-b")
        assert _texts(conn) == (0, 0, 0)


def test_texts_are_not_shared_across_text_configurations(db: Database) -> None:
    docs = [Document("a", "running runners ran"), Document("b", "the runner")]
    with db.connect() as conn:
        load_snapshot(conn, "cfg-en", docs)
        load_snapshot(conn, "cfg-simple", docs, text_config="simple")
        assert _texts(conn) == (4, 0, 0)
        en = rank_snapshot(conn, "cfg-en", "run").candidates
        simple = rank_snapshot(conn, "cfg-simple", "run").candidates
        assert en[0].bm25_score > 0 and simple[0].bm25_score == 0
        drop_snapshot(conn, "cfg-en")
        drop_snapshot(conn, "cfg-simple")
        assert _texts(conn) == (0, 0, 0)


# -- the property -------------------------------------------------------------------

_TEXTS = st.lists(
    st.lists(
        st.sampled_from([*WORDS, "ReadConfig", "get_value", "HTTPServer", "the"]), max_size=6
    ).map(" ".join),
    min_size=1,
    max_size=5,
)


@st.composite
def _corpora(draw: st.DrawFn) -> list[Document]:
    """Up to 12 documents drawing on a few texts, so that texts repeat."""
    texts = draw(_TEXTS)
    n = draw(st.integers(1, 12))
    picks = draw(st.lists(st.integers(0, len(texts) - 1), min_size=n, max_size=n))
    ids = draw(
        st.lists(st.text("abcXYZ_/é", min_size=1, max_size=4), min_size=n, max_size=n, unique=True)
    )
    return [Document(i, texts[p]) for i, p in zip(ids, picks, strict=True)]


def test_one_job_and_two_jobs_load_the_same_snapshot(db: Database) -> None:
    with db.connect() as conn:

        @settings(
            max_examples=15,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
        @given(docs=_corpora(), query=st.sampled_from(["read config", "get value server", "the"]))
        def same(docs: list[Document], query: str) -> None:
            def seen(snapshot: str, jobs: int) -> tuple[Any, ...]:
                load_snapshot(conn, snapshot, docs, jobs=jobs)
                return (
                    _rankings(conn, snapshot, docs, [query]),
                    _postings(conn, snapshot),
                    _documents(conn, snapshot),
                )

            one = seen("prop-1", 1)
            assert seen("prop-reused", 2) == one  # every text stored by prop-1
            drop_snapshot(conn, "prop-1")
            drop_snapshot(conn, "prop-reused")
            assert _texts(conn) == (0, 0, 0)
            assert seen("prop-2", 2) == one  # computed again, on the workers
            drop_snapshot(conn, "prop-2")
            assert _texts(conn) == (0, 0, 0)

        same()


# -- migration 0006 -----------------------------------------------------------------


@pytest.fixture
def fresh_db(server_dsn: str, template: str) -> Iterator[Database]:
    database = create_database(server_dsn, "riido_t_texts_migr", template=template)
    yield database
    drop_database(server_dsn, database.name)


def _v1_digest(docs: list[Document], text_config: str) -> str:
    """The riido-pg/1 content digest of 0005's loader (documents in id order)."""
    h = hashlib.sha256()
    h.update(f"riido-pg/1\0splitter {SPLITTER_VERSION}\0{text_config}\0".encode())
    for doc in sorted(docs, key=lambda d: d.id):
        i, t = doc.id.encode("utf-8"), doc.text.encode("utf-8")
        h.update(len(i).to_bytes(8, "big") + i + len(t).to_bytes(8, "big") + t)
    return h.hexdigest()


def _columns(conn: Any, table: str) -> set[str]:
    return {
        r[0]
        for r in conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'riido' AND table_name = %s",
            (table,),
        )
    }


def test_migration_0006_down_and_up_with_data(
    fresh_db: Database, commits: tuple[list[Document], list[Document]], tmp_path: Path
) -> None:
    a, b = commits
    beir = small(tmp_path / "beir")
    with fresh_db.connect() as conn:
        load_snapshot(conn, "m-a", a, jobs=2)
        load_snapshot(conn, "m-b", b, jobs=1)
        stored = store_corpus(conn, beir)  # an evaluation corpus remembers its digest
        assert stored.action == "stored"
        before = {s: _rankings(conn, s, d, QUERIES[:3]) for s, d in (("m-a", a), ("m-b", b))}
        v2 = dict(conn.execute("SELECT snapshot_id, content_digest FROM riido.snapshots"))
    migrate.downgrade(fresh_db.dsn, "0005")
    assert migrate.current(fresh_db.dsn) == "0005"
    with fresh_db.connect() as conn:
        assert {"body", "tsv_raw", "tsv_ident", "len_raw", "len_ident"} <= _columns(
            conn, "documents"
        )
        assert "text_key" not in _columns(conn, "documents")
        assert _columns(conn, "texts") == set() and _columns(conn, "text_pending") == set()
        v1 = dict(conn.execute("SELECT snapshot_id, content_digest FROM riido.snapshots"))
        assert all(re.fullmatch("[0-9a-f]{64}", d) for d in v1.values())
        assert v1.pop(stored.snapshot_id) == _one(
            conn, "SELECT content_digest FROM riido.eval_corpora"
        )
        assert v1 == {"m-a": _v1_digest(a, "english"), "m-b": _v1_digest(b, "english")}
        bodies = dict(
            conn.execute("SELECT doc_id, body FROM riido.documents WHERE snapshot_id = 'm-b'")
        )
        assert bodies == {d.id: d.text for d in b}
        assert _one(conn, "SELECT count(*) FROM riido.documents WHERE tsv_raw IS NULL") == 0
    migrate.upgrade(fresh_db.dsn)
    with fresh_db.connect() as conn:
        assert dict(conn.execute("SELECT snapshot_id, content_digest FROM riido.snapshots")) == v2
        assert _texts(conn) == (len({d.text for d in a} | {d.text for d in b}) + 3, 0, 0)
        for s, d in (("m-a", a), ("m-b", b)):
            assert _rankings(conn, s, d, QUERIES[:3]) == before[s]
        for jobs in (1, 2):
            assert load_snapshot(conn, "m-a", a[::-1], jobs=jobs).action == "unchanged"
            assert load_snapshot(conn, "m-b", b, jobs=jobs).action == "unchanged"
        assert store_corpus(conn, beir).action == "reused"
        assert corpus_info(conn, stored.snapshot_id).documents == 3
        for snapshot in ("m-a", "m-b", stored.snapshot_id):
            drop_snapshot(conn, snapshot)
        assert _texts(conn) == (0, 0, 0)
    with psycopg.connect(fresh_db.dsn) as conn:  # nothing else was left behind
        assert _one(conn, "SELECT count(*) FROM riido.postings") == 0
