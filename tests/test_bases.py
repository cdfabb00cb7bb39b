"""Snapshots on a base (README "Snapshots on a base"): a snapshot stored as its base's
path of segments plus its own difference ranks exactly as a fresh load of the same
documents, on every policy, for any sequence of edits; dropping snapshots in any
order keeps what the others need and leaves no unreferenced row."""

from __future__ import annotations

import random
import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.database import Database

from riido_pg import Document, drop_snapshot, get_snapshot, load_snapshot, rank_snapshot
from riido_pg.errors import InvalidInput, SnapshotNotFound
from riido_pg.ranking import policies
from riido_pg.ranking.policy.structure import STRUCTURE_TEST_PRIOR

WORDS = (
    "read write config file parse json http server client get set value key load save "
    "ReadConfig write_file HTTPServer parseJson getValue"
).split()
QUERIES = ["read config", "http server json", "getValue key", "zzz"]
POLICIES = [p for p in policies() if not p.needs_model]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))


Edit = tuple[str, int, int]  # (kind, which, seed)
EDITS = st.lists(
    st.tuples(
        st.sampled_from(["add", "change", "remove", "rename", "same", "clear"]),
        st.integers(0, 1_000),
        st.integers(0, 1_000),
    ),
    min_size=1,
    max_size=4,
)


def _apply(docs: dict[str, str], edit: Edit, step: int) -> dict[str, str]:
    kind, which, seed = edit
    rng = random.Random(seed)
    out = dict(docs)
    ids = sorted(out)
    if kind == "add" or not ids:
        out[f"n{step}-{which}"] = _text(rng)
    elif kind == "change":
        out[ids[which % len(ids)]] = _text(rng)
    elif kind == "remove" and len(ids) > 1:
        del out[ids[which % len(ids)]]
    elif kind == "rename":
        old = ids[which % len(ids)]
        out[f"r{step}-{old}"] = out.pop(old)
    elif kind == "clear":  # every document replaced
        out = {f"c{step}-{i}": _text(rng) for i in range(rng.randint(1, 6))}
    return out


def _ranking(conn: Any, snapshot: str, query: str, policy: Any, limit: int | None) -> Any:
    hints = None
    if policy.needs_hints:
        ids = sorted(d.doc_id for d in _held(conn, snapshot))
        hints = ids[::-2]
    ranking = rank_snapshot(conn, snapshot, query, policy=policy.name, limit=limit, hints=hints)
    return ranking.policy, [c.to_dict() for c in ranking.candidates]


class _Held:
    def __init__(self, doc_id: str) -> None:
        self.doc_id = doc_id


def _held(conn: Any, snapshot: str) -> list[_Held]:
    rows = conn.execute(
        "SELECT d.doc_id FROM riido.snapshot_segments AS p "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "JOIN riido.snapshots AS s ON s.snapshot_id = p.snapshot_id "
        "WHERE p.snapshot_id = %s AND NOT d.doc_ord = ANY(s.removed)",
        (snapshot,),
    ).fetchall()
    return [_Held(str(r[0])) for r in rows]


def _gone_rows_list_the_removed(conn: Any, snapshot: str) -> None:
    """The gone lists of a snapshot's path (sql/segment_postings.sql) hold each document
    it removed under each lexeme of each ranked column once, and nothing else: what the
    path's own postings hold of the removed documents."""
    listed = conn.execute(
        "SELECT p.col, p.lexeme, u.doc_ord FROM riido.snapshot_segments AS s "
        "JOIN riido.postings AS p ON p.segment_id = s.segment_id "
        "CROSS JOIN LATERAL unnest(p.gone) AS u(doc_ord) WHERE s.snapshot_id = %s",
        (snapshot,),
    ).fetchall()
    held = conn.execute(
        "SELECT p.col, p.lexeme, u.doc_ord FROM riido.snapshot_segments AS s "
        "JOIN riido.snapshots AS n ON n.snapshot_id = s.snapshot_id "
        "JOIN riido.postings AS p ON p.segment_id = s.segment_id "
        " AND p.col IN ('raw', 'ident', 'name') "
        "CROSS JOIN LATERAL unnest(p.doc_ords) AS u(doc_ord) "
        "WHERE s.snapshot_id = %s AND u.doc_ord = ANY(n.removed)",
        (snapshot,),
    ).fetchall()
    assert sorted(listed) == sorted(held), snapshot


def _unreferenced(conn: Any) -> dict[str, int]:
    """Rows nothing needs: segments no path holds, texts no document references,
    documents and postings of segments that are gone, pending rows."""
    one = lambda q: int(conn.execute(q).fetchone()[0])  # noqa: E731
    return {
        "segments": one(
            "SELECT count(*) FROM riido.segments AS g WHERE NOT EXISTS "
            "(SELECT 1 FROM riido.snapshot_segments AS p WHERE p.segment_id = g.segment_id)"
        ),
        "texts": one(
            "SELECT count(*) FROM riido.texts AS t WHERE NOT EXISTS "
            "(SELECT 1 FROM riido.documents AS d WHERE d.text_key = t.key)"
        ),
        "pending": one("SELECT count(*) FROM riido.text_pending"),
        "stage": one("SELECT count(*) FROM riido.load_stage"),
    }


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    start=st.integers(1, 8), seed=st.integers(0, 10_000), edits=EDITS, jobs=st.sampled_from([1, 2])
)
def test_a_snapshot_on_a_base_ranks_as_a_fresh_load(
    db: Database, start: int, seed: int, edits: list[Edit], jobs: int
) -> None:
    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:8]
    docs = {f"d{i:02d}": _text(rng) for i in range(start)}
    names: list[str] = []
    with db.connect() as conn:
        prev = f"{tag}-0"
        load_snapshot(conn, prev, [Document(k, v) for k, v in docs.items()], fresh=True)
        names.append(prev)
        for step, edit in enumerate(edits, start=1):
            docs = _apply(docs, edit, step)
            on_base, fresh = f"{tag}-{step}", f"{tag}-{step}-fresh"
            given_docs = [Document(k, v) for k, v in docs.items()]
            result = load_snapshot(conn, on_base, given_docs, base=prev, jobs=jobs)
            assert result.base == prev and result.documents == len(docs)
            load_snapshot(conn, fresh, given_docs, fresh=True)
            names += [on_base, fresh]
            stored = get_snapshot(conn, on_base)
            assert stored.base == prev and len(stored.segments) >= 1
            _gone_rows_list_the_removed(conn, on_base)
            assert stored.documents == get_snapshot(conn, fresh).documents
            assert (stored.len_raw, stored.len_ident) == (
                get_snapshot(conn, fresh).len_raw,
                get_snapshot(conn, fresh).len_ident,
            )
            for policy in POLICIES:
                for query in QUERIES:
                    for limit in (None, 2):
                        assert _ranking(conn, on_base, query, policy, limit) == _ranking(
                            conn, fresh, query, policy, limit
                        ), (policy.name, query, limit, edits[:step])
            prev = on_base
        # drop in a random order: every other snapshot still ranks, nothing is left
        order = names[:]
        rng.shuffle(order)
        for i, name in enumerate(order):
            drop_snapshot(conn, name)
            for other in order[i + 1 :]:
                assert rank_snapshot(conn, other, "read config").candidates
        assert _unreferenced(conn) == {"segments": 0, "texts": 0, "pending": 0, "stage": 0}


def test_the_automatic_base_is_the_snapshot_sharing_most(db: Database) -> None:
    docs = {f"f{i:04d}": f"def fn_{i}(x): return read config {i}" for i in range(400)}
    with db.connect() as conn:
        load_snapshot(conn, "auto@1", [Document(k, v) for k, v in docs.items()])
        unrelated = [Document(f"u{i}", f"unrelated text {i}") for i in range(50)]
        load_snapshot(conn, "other", unrelated)
        docs["f0003"] = "def fn_3(x): return write config"
        docs["f9999"] = "def fn_new(): pass"
        del docs["f0010"]
        result = load_snapshot(conn, "auto@2", [Document(k, v) for k, v in docs.items()])
        assert (result.base, result.added, result.removed) == ("auto@1", 2, 2)
        snap = get_snapshot(conn, "auto@2")
        assert (
            len(snap.segments) == 2 and snap.segments[0] == get_snapshot(conn, "auto@1").segments[0]
        )
        # counted over a path's segments: a snapshot holding its base's documents and
        # more of the new load's shares more than its base
        grown = {**docs, **{f"g{i:03d}": f"def grown_{i}(): return {i}" for i in range(60)}}
        result = load_snapshot(conn, "auto@2b", [Document(k, v) for k, v in grown.items()])
        assert result.base == "auto@2"
        grown["g999"] = "def one_more(): pass"
        result = load_snapshot(conn, "auto@2c", [Document(k, v) for k, v in grown.items()])
        assert (result.base, result.added, result.removed) == ("auto@2b", 1, 2)  # 2 from auto@2
        # past the bound (a quarter of the documents removed), the load is fresh
        shrunk = {k: v for k, v in docs.items() if int(k[1:]) % 2}
        result = load_snapshot(conn, "auto@3", [Document(k, v) for k, v in shrunk.items()])
        assert (result.base, result.added) == (None, len(shrunk))
        assert len(get_snapshot(conn, "auto@3").segments) == 1


def test_bad_bases_are_one_clear_error_and_store_nothing(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "b-ok", [Document("a", "read config")])
        load_snapshot(conn, "b-simple", [Document("a", "read config")], text_config="simple")
        conn.execute(
            "INSERT INTO riido.snapshots (snapshot_id, text_config, state, document_count, "
            "content_digest, k1, b) VALUES ('b-loading', 'english', 'loading', 0, '', 1.2, 0.75)"
        )
        docs = [Document("a", "read config"), Document("b", "write")]
        with pytest.raises(SnapshotNotFound, match="no snapshot 'nope'"):
            load_snapshot(conn, "b-new", docs, base="nope")
        with pytest.raises(InvalidInput, match="'b-loading' is not ready"):
            load_snapshot(conn, "b-new", docs, base="b-loading")
        with pytest.raises(InvalidInput, match="text configuration 'simple'"):
            load_snapshot(conn, "b-new", docs, base="b-simple")
        with pytest.raises(InvalidInput, match="either on a base or fresh"):
            load_snapshot(conn, "b-new", docs, base="b-ok", fresh=True)
        with pytest.raises(SnapshotNotFound):
            get_snapshot(conn, "b-new")


def test_a_base_dropped_while_a_dependent_loads_stays_until_the_load_ends(
    db: Database,
) -> None:
    """The dependent load computed its difference against the base; the base is then
    dropped before the load publishes: the load completes on the segments it
    chose, and they go only when the dependent goes."""
    docs = [Document(f"k{i}", f"read config value {i}") for i in range(200)]
    with db.connect() as conn:
        load_snapshot(conn, "gone-base", docs)
        expected = [
            c.to_dict() for c in rank_snapshot(conn, "gone-base", "read config value 7").candidates
        ]
    changed = [*docs[:-1], Document("k-new", "read config value 7 and more")]
    with db.connect() as holder, db.connect() as loader, db.connect() as dropper:
        holder.execute("BEGIN")
        holder.execute("LOCK TABLE riido.postings IN ACCESS EXCLUSIVE MODE")
        done: list[Any] = []
        worker = threading.Thread(
            target=lambda: done.append(load_snapshot(loader, "dependent", changed)), daemon=True
        )
        worker.start()
        for _ in range(500):
            row = dropper.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                (loader.info.backend_pid,),
            ).fetchone()
            if row and row[0]:
                break
            time.sleep(0.02)
        drop_snapshot(dropper, "gone-base")  # the collector cannot run: a load holds texts
        holder.execute("COMMIT")
        worker.join(60)
        assert done and done[0].base == "gone-base"
        got = rank_snapshot(dropper, "dependent", "read config value 7")
        assert got.candidates[0].id == "k-new"
        drop_snapshot(dropper, "dependent")
        assert _unreferenced(dropper) == {"segments": 0, "texts": 0, "pending": 0, "stage": 0}
    assert expected  # the base ranked before it went


def test_migration_0009_down_and_up_with_data(db: Database) -> None:
    from riido_pg.server import migrate

    with db.connect() as conn:
        base = [Document(f"m{i}", f"read config {i}") for i in range(30)]
        load_snapshot(conn, "mig-a", base)
        load_snapshot(conn, "mig-b", [*base[:-1], Document("m-new", "write config")], base="mig-a")
        before = {
            s: [c.to_dict() for c in rank_snapshot(conn, s, "read config 3").candidates]
            for s in ("mig-a", "mig-b")
        }
    migrate.downgrade(db.dsn, "0008")
    with psycopg.connect(db.dsn) as conn:
        assert conn.execute(
            "SELECT count(*) FROM riido.documents WHERE snapshot_id IN ('mig-a', 'mig-b')"
        ).fetchone() == (60,)
    migrate.upgrade(db.dsn)
    with db.connect() as conn:
        after = {
            s: [c.to_dict() for c in rank_snapshot(conn, s, "read config 3").candidates]
            for s in ("mig-a", "mig-b")
        }
        assert after == before
        assert get_snapshot(conn, "mig-b").base is None  # each snapshot its own segment again


def test_migration_0016_down_and_up_with_data(db: Database) -> None:
    """Downgrading 0016 deletes the gone lists and the segments of no documents;
    upgrading gives each snapshot that removed documents one listing them all, and
    every snapshot ranks as before, as does the next load on one."""
    from riido_pg.server import migrate

    base = {f"g{i:02d}": f"read config {i} parseJson" for i in range(30)}
    chain = [
        ("g15-a", base),
        ("g15-b", {**{k: v for k, v in base.items() if k != "g03"}, "g-new": "write config"}),
        ("g15-c", {k: v for k, v in base.items() if k not in ("g03", "g07")}),  # removes only
    ]
    with db.connect() as conn:
        prev = None
        for name, docs in chain:
            load_snapshot(conn, name, [Document(k, v) for k, v in docs.items()], base=prev)
            prev = name
        assert get_snapshot(conn, "g15-c").added == 0  # its segment holds no documents
        assert len(get_snapshot(conn, "g15-c").segments) == 3

        def rankings() -> dict[tuple[str, str], Any]:
            return {
                (name, p.name): _ranking(conn, name, "read config 3", p, None)
                for name, _ in chain
                for p in POLICIES
            }

        before = rankings()
    migrate.downgrade(db.dsn, "0015")
    with psycopg.connect(db.dsn) as conn:
        empty = conn.execute(
            "SELECT (SELECT count(*) FROM riido.segments WHERE documents = 0), "
            "(SELECT count(*) FROM riido.postings WHERE cardinality(doc_ords) = 0)"
        )
        assert empty.fetchone() == (0, 0)
        paths = conn.execute(
            "SELECT snapshot_id, array_agg(position ORDER BY position) "
            "FROM riido.snapshot_segments WHERE snapshot_id LIKE 'g15-%%' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert paths == [("g15-a", [0]), ("g15-b", [0, 1]), ("g15-c", [0, 1])]
    migrate.upgrade(db.dsn)
    with db.connect() as conn:
        assert rankings() == before
        for name in ("g15-b", "g15-c"):
            _gone_rows_list_the_removed(conn, name)
        docs = {k: v for k, v in chain[-1][1].items() if k != "g11"}
        given = [Document(k, v) for k, v in docs.items()]
        load_snapshot(conn, "g15-d", given, base="g15-c")
        load_snapshot(conn, "g15-d-fresh", given, fresh=True)
        _gone_rows_list_the_removed(conn, "g15-d")
        for p in POLICIES:
            for query in QUERIES:
                assert _ranking(conn, "g15-d", query, p, None) == _ranking(
                    conn, "g15-d-fresh", query, p, None
                )


def _stored_test_ids(conn: Any, like: str) -> list[str]:
    """The ids (matching ``like``) that some stored segment's kind postings make tests."""
    rows = conn.execute(
        "SELECT d.doc_id FROM riido.postings AS p JOIN riido.documents AS d "
        "ON d.segment_id = p.segment_id AND d.doc_ord = ANY(p.doc_ords) "
        "WHERE p.col = 'kind' AND p.lexeme = 'test' AND d.doc_id LIKE %s",
        (like,),
    )
    return sorted({r[0] for r in rows})


def test_migration_0022_down_and_up_with_data(db: Database) -> None:
    """Downgrading 0022 writes the test kinds again by the path rule alone (a Rust unit
    test in ``mod tests`` is no test, so structure_bm25 ranks it first); upgrading makes
    it a test again in the stored segments, on a base too, as a new load would."""
    from riido_pg.server import migrate

    impl = Document("src/uri/path.rs:PathAndQuery.from_shared:21", "fn from_shared empty path")
    inline = Document("src/uri/path.rs:tests.rejects_empty:64", "fn rejects empty path from_shared")
    test_file = Document("tests/path.rs:empty:1", "fn empty")
    other = [Document(f"src/lib.rs:f{i}:{i}", f"fn f{i} encode header {i}") for i in range(10)]
    query = "empty path from_shared"

    def first(conn: Any, name: str) -> str:
        return rank_snapshot(conn, name, query, policy="structure_bm25", limit=1).candidates[0].id

    def tests(conn: Any) -> list[str]:
        return _stored_test_ids(conn, "%path.rs:%")

    with db.connect() as conn:
        load_snapshot(conn, "k21-a", [test_file, *other])
        load_snapshot(conn, "k21-b", [impl, inline, test_file, *other], base="k21-a")
        assert tests(conn) == [inline.id, test_file.id]
        assert first(conn, "k21-b") == impl.id
    migrate.downgrade(db.dsn, "0021")
    with psycopg.connect(db.dsn) as conn:
        assert tests(conn) == [test_file.id]
    migrate.upgrade(db.dsn)
    with db.connect() as conn:
        assert tests(conn) == [inline.id, test_file.id]
        assert first(conn, "k21-b") == impl.id
        load_snapshot(conn, "k21-fresh", [impl, inline, test_file, *other], fresh=True)
        for p in POLICIES:
            assert _ranking(conn, "k21-b", query, p, None) == _ranking(
                conn, "k21-fresh", query, p, None
            ), p.name


def test_migration_0023_down_and_up_with_data(db: Database) -> None:
    """Downgrading 0023 writes the test kinds again by the id alone (a Rust ``#[test]``
    function outside any test module is no test: no test prior);
    upgrading makes it a test again in the stored segments, on a base too, from the
    stored text, as a new load would."""
    from riido_pg.server import migrate

    impl = Document("src/map.rs:HeaderMap.reserve:21", "pub fn reserve bounds capacity")
    attributed = Document("src/map.rs:test_bounds:64", "#[test]\nfn test_bounds reserve bounds")
    python = Document("src/map.py:test_bounds:1", "#[test]\ndef test_bounds reserve bounds")
    other = [Document(f"src/lib.rs:f{i}:{i}", f"fn f{i} encode header {i}") for i in range(10)]
    query = "reserve bounds"

    def first(conn: Any, name: str) -> str:
        return rank_snapshot(conn, name, query, policy="structure_bm25", limit=1).candidates[0].id

    def score(conn: Any, name: str) -> float:
        # at 0022 there is no window table (0025): the priors reading it off, as without
        # a window
        got = rank_snapshot(
            conn,
            name,
            query,
            policy="structure_bm25",
            params={"history_prior": 0.0, "change_prior": 0.0},
        ).candidates
        found = next(c.score for c in got if c.id == attributed.id)
        assert found is not None
        return found

    def tests(conn: Any) -> list[str]:
        return _stored_test_ids(conn, "src/map.%")

    with db.connect() as conn:
        load_snapshot(conn, "k23-a", [python, *other])
        load_snapshot(conn, "k23-b", [impl, attributed, python, *other], base="k23-a")
        assert tests(conn) == [attributed.id]  # a .py path: the attribute rule is Rust's
        assert first(conn, "k23-b") == impl.id
    migrate.downgrade(db.dsn, "0022")
    with psycopg.connect(db.dsn) as conn:
        assert tests(conn) == []
    with psycopg.connect(db.dsn) as conn:
        undemoted = score(conn, "k23-b")  # no test prior
    migrate.upgrade(db.dsn)
    with db.connect() as conn:
        assert tests(conn) == [attributed.id]
        assert first(conn, "k23-b") == impl.id
        demoted = undemoted * STRUCTURE_TEST_PRIOR
        assert score(conn, "k23-b") == pytest.approx(demoted, rel=1e-12)
        load_snapshot(conn, "k23-fresh", [impl, attributed, python, *other], fresh=True)
        for p in POLICIES:
            assert _ranking(conn, "k23-b", query, p, None) == _ranking(
                conn, "k23-fresh", query, p, None
            ), p.name
