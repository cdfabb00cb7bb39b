"""Vectors keyed by content (riido.text_vectors): a text is embedded once per model,
whichever snapshots (on a base, fresh, scratch) hold it; progress while embedding;
vectors go with their texts, move with their snapshot, and survive the migration
both ways. The real wordllama-256 model, wrapped only to count the texts it is given.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg
import pytest
from support.corpus import stdlib_functions
from support.database import Database, create_database, drop_database

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.embedding import register_model, unregister_model
from riido_pg.embedding.vectors import Matrix
from riido_pg.ranking.model_hints import model_named
from riido_pg.ranking.policies import MODEL_HINTS_BASELINE_FIRST
from riido_pg.ranking.rank import rank_documents
from riido_pg.server import migrate
from riido_pg.storage import embeddings
from riido_pg.storage.embeddings import embed_snapshot
from riido_pg.storage.snapshots import drop_snapshot

pytest.importorskip("tokenizers", reason="needs the model extra: pip install 'riido-pg[model]'")

_names = itertools.count()


@functools.cache
def functions() -> list[Document]:
    """Sixty real functions (parsed once: parsing is the slow part)."""
    return stdlib_functions(60)


@functools.cache
def wordllama() -> Any:
    from riido_pg.embedding.wordllama import load_wordllama

    return load_wordllama()


class Counting:
    """wordllama-256 itself, remembering every text it was asked to embed."""

    def __init__(self) -> None:
        self.inner = wordllama()
        self.seen: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.seen.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def counting() -> Iterator[tuple[str, Counting]]:
    """A freshly registered model name (so no vector exists for it yet) and its counter."""
    name = f"counting-{next(_names)}"
    model = Counting()
    register_model(name, lambda: model, dim=model.dim)
    yield name, model
    unregister_model(name)


def _vectors(conn: Any, model: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM riido.text_vectors WHERE model = %s", (model,)
    ).fetchone()
    return int(row[0])


def _texts_embedded(conn: Any, snapshot_id: str, model: str) -> int | None:
    row = conn.execute(
        "SELECT texts_embedded FROM riido.snapshot_models WHERE snapshot_id = %s AND model = %s",
        (snapshot_id, model),
    ).fetchone()
    return None if row is None else row[0]


def test_a_later_snapshot_embeds_only_its_new_texts(
    conn: Any, counting: tuple[str, Counting]
) -> None:
    name, model = counting
    funcs = functions()
    first = funcs[:50]
    # the next commit: 5 functions changed, 5 added, one text repeated under a new id
    changed = [Document(d.id, d.text + "\n    # changed") for d in first[:5]]
    added = funcs[50:55]
    copy = Document(first[20].id + ":copy", first[20].text)
    second = changed + first[5:] + added + [copy]
    load_snapshot(conn, "tv@1", first)
    load_snapshot(conn, "tv@2", second, base="tv@1")
    load_snapshot(conn, "tv@2-fresh", second, fresh=True)

    assert embed_snapshot(conn, "tv@1", model_named(name))
    assert sorted(model.seen) == sorted({d.text for d in first})
    assert _texts_embedded(conn, "tv@1", name) == len({d.text for d in first})

    model.seen.clear()
    assert embed_snapshot(conn, "tv@2", model_named(name))
    new = {d.text for d in changed + added}
    assert sorted(model.seen) == sorted(new)  # each new text once; the copy is not new
    assert _texts_embedded(conn, "tv@2", name) == len(new)
    assert _vectors(conn, name) == len({d.text for d in first} | new)

    model.seen.clear()
    assert embed_snapshot(conn, "tv@2-fresh", model_named(name))  # a fresh copy: nothing new
    assert model.seen == []
    assert _texts_embedded(conn, "tv@2-fresh", name) == 0
    assert not embed_snapshot(conn, "tv@2", model_named(name))  # already embedded

    # both snapshots rank alike with the shared vectors
    for query in ("read the config file", "join path parts"):
        a = rank_snapshot(conn, "tv@2", query, policy=MODEL_HINTS_BASELINE_FIRST, model=name)
        b = rank_snapshot(conn, "tv@2-fresh", query, policy=MODEL_HINTS_BASELINE_FIRST, model=name)
        assert [c.id for c in a.candidates] == [c.id for c in b.candidates]
        assert len(a.candidates) == len(second)


def test_the_stored_vector_is_the_models_vector_of_the_text(
    conn: Any, counting: tuple[str, Counting]
) -> None:
    from riido_pg.embedding import from_bytea

    name, model = counting
    docs = functions()[:12]
    load_snapshot(conn, "tv-exact", docs)
    embed_snapshot(conn, "tv-exact", model_named(name))
    want = model_named(name).embed([d.text for d in docs])
    rows = conn.execute(
        "SELECT d.doc_id, v.vec FROM riido.snapshot_segments AS p "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "JOIN riido.text_vectors AS v ON v.text_key = d.text_key AND v.model = %s "
        "WHERE p.snapshot_id = 'tv-exact'",
        (name,),
    ).fetchall()
    got = {r[0]: from_bytea(bytes(r[1]), model.dim) for r in rows}
    assert len(got) == len(docs)
    for d, row in zip(docs, want, strict=True):
        np.testing.assert_array_equal(got[d.id], row)


def test_progress_counts_every_new_text_once_in_batches(
    conn: Any, counting: tuple[str, Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, model = counting
    monkeypatch.setattr(embeddings, "BATCH", 7)
    docs = functions()[:30]
    load_snapshot(conn, "tv-progress", docs)
    calls: list[tuple[str, int, int]] = []
    embed_snapshot(
        conn, "tv-progress", model_named(name), progress=lambda *a: calls.append(tuple(a))
    )
    n = len({d.text for d in docs})
    assert calls[0] == ("embeddings", 0, n)
    assert calls[-1] == ("embeddings", n, n)
    assert [c[1] for c in calls] == sorted({0, *range(7, n, 7), n})
    assert len(model.seen) == n == len(set(model.seen))


def test_hints_reuse_stored_vectors_and_store_nothing(
    conn: Any, counting: tuple[str, Counting]
) -> None:
    name, model = counting
    docs = functions()[:20]
    load_snapshot(conn, "tv-stored", docs[:15])
    embed_snapshot(conn, "tv-stored", model_named(name))
    before = _vectors(conn, name)
    model.seen.clear()
    from riido_pg.documents import DocumentSet, RankRequest

    request = RankRequest("scratch", "read the config file", DocumentSet(docs))
    ranking = rank_documents(conn, request, policy=MODEL_HINTS_BASELINE_FIRST, model=name)
    assert len(ranking.candidates) == len(docs)
    # only the new texts, and the query
    assert sorted(model.seen) == sorted({d.text for d in docs[15:]} | {request.query})
    assert _vectors(conn, name) == before  # the scratch snapshot's vectors rolled back


def test_vectors_go_with_their_last_text(conn: Any, counting: tuple[str, Counting]) -> None:
    name, _ = counting
    # texts no other test of the module holds, so only these snapshots reference them
    docs = [Document(d.id, d.text + "\n# only here") for d in functions()[:40]]
    load_snapshot(conn, "tv-keep", docs[:30])
    load_snapshot(conn, "tv-drop", docs[20:])
    for sid in ("tv-keep", "tv-drop"):
        embed_snapshot(conn, sid, model_named(name))
    assert _vectors(conn, name) == len({d.text for d in docs})
    drop_snapshot(conn, "tv-drop")
    assert _vectors(conn, name) == len({d.text for d in docs[:30]})
    ranking = rank_snapshot(conn, "tv-keep", "sort", policy=MODEL_HINTS_BASELINE_FIRST, model=name)
    assert len(ranking.candidates) == 30


@pytest.fixture
def migrating(server_dsn: str) -> Iterator[Database]:
    database = create_database(server_dsn, "riido_t_vec_migr")
    yield database
    drop_database(server_dsn, database.name)


def test_migration_keeps_every_vector_down_and_up(migrating: Database) -> None:
    dsn = migrating.dsn
    docs = functions()[:30]
    with psycopg.connect(dsn, autocommit=True) as conn:
        load_snapshot(conn, "m@1", docs[:25])
        load_snapshot(conn, "m@2", docs[5:], base="m@1")
        load_snapshot(
            conn, "m-plain", [*docs[:3], Document("only-here", "def lonely(): pass")], fresh=True
        )
        for sid in ("m@1", "m@2"):
            embed_snapshot(conn, sid, model_named("wordllama-256"))
        before = conn.execute(
            "SELECT text_key, model, vec FROM riido.text_vectors ORDER BY 1, 2"
        ).fetchall()
        ranked = [
            c.id
            for c in rank_snapshot(
                conn, "m@2", "sort a list", policy=MODEL_HINTS_BASELINE_FIRST, model="wordllama-256"
            ).candidates
        ]
    assert len(before) == 30
    migrate.downgrade(dsn, "0010")
    with psycopg.connect(dsn, autocommit=True) as conn:
        # the per-segment form: every document of an embedded segment has its text's vector
        per_doc = conn.execute(
            "SELECT count(*), count(DISTINCT d.text_key) FROM riido.embeddings AS e "
            "JOIN riido.documents AS d ON d.segment_id = e.segment_id AND d.doc_ord = e.doc_ord"
        ).fetchone()
        segments = conn.execute(
            "SELECT count(*) FROM riido.segment_models AS m WHERE m.model = 'wordllama-256'"
        ).fetchone()
        models = conn.execute("SELECT snapshot_id FROM riido.snapshot_models ORDER BY 1").fetchall()
    assert models == [("m@1",), ("m@2",)]
    assert segments == (2,)  # m@1's segment and m@2's own; not m-plain's (a text has none)
    assert per_doc == (30, 30)
    migrate.upgrade(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        after = conn.execute(
            "SELECT text_key, model, vec FROM riido.text_vectors ORDER BY 1, 2"
        ).fetchall()
        again = [
            c.id
            for c in rank_snapshot(
                conn, "m@2", "sort a list", policy=MODEL_HINTS_BASELINE_FIRST, model="wordllama-256"
            ).candidates
        ]
    assert after == before
    assert again == ranked
