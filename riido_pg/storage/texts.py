"""Content-addressed texts: one row per distinct document text, shared by snapshots.

``riido.texts`` holds a text and what PostgreSQL derives from it (both tsvectors and
their lengths) under :func:`text_key`, a hash of the splitter version, the text
search configuration and the text, so any snapshot holding the same text under the
same configuration reuses it instead of running ``to_tsvector`` again. Snapshots
reference texts from ``riido.documents.text_key``.

A text can lose its last reference (its snapshots dropped or replaced) or never get
one (a load that failed or was killed after a worker stored it). Such candidates are
listed in ``riido.text_pending``; :func:`collect_garbage` removes the unreferenced
ones. Every load holds the texts lock shared (:func:`texts_shared`) from its first
look-up of a key to its end, and the collector runs only when it gets the lock
exclusively, so it never removes a text a running load is about to reference; when
it cannot get the lock it leaves the candidates to the next collection (which every
load and every drop attempts when it ends).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from psycopg import sql

from riido_pg.resources import sql_template, sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.plans import Plan, Query, run
from riido_pg.server.settle import releasing
from riido_pg.splitting import SPLITTER_VERSION
from riido_pg.storage.fragments import HELD

__all__ = [
    "collect_garbage",
    "copy_texts",
    "key_of",
    "key_of_utf8",
    "key_prefix",
    "new_texts_plan",
    "stored_digest",
    "text_key",
    "text_keyer",
    "texts_shared",
    "texts_shared_xact",
    "texts_shared_xact_plan",
]

_LOCK = (0x52494947, 0)  # "RIIG": the texts lock, apart from the snapshot locks ("RIID")


def key_prefix(text_config: str) -> bytes:
    """What every text key of ``text_config`` hashes before the text: the one
    definition of the key (``sql/snapshot_digest.sql`` gets it as a parameter)."""
    return (
        b"riido-pg/text\0" + str(SPLITTER_VERSION).encode() + b"\0" + text_config.encode() + b"\0"
    )


def text_keyer(text_config: str) -> hashlib._Hash:
    """The hash state every text key of ``text_config`` starts from (copy, then update
    with the text's UTF-8)."""
    return hashlib.sha256(key_prefix(text_config))


def key_of(keyer: hashlib._Hash, text: str) -> bytes:
    """The 16 bytes of ``text``'s key from a configuration's :func:`text_keyer` (left
    as it was, so one keyer serves a whole load); ``bytes.hex()`` is its uuid text."""
    return key_of_utf8(keyer, text.encode("utf-8"))


def key_of_utf8(keyer: hashlib._Hash, data: bytes) -> bytes:
    """:func:`key_of` of a text already in UTF-8 (``data``)."""
    h = keyer.copy()
    h.update(data)
    return h.digest()[:16]


def text_key(text: str, text_config: str) -> uuid.UUID:
    """The key of ``text`` under ``text_config`` (the first 16 bytes of a sha256)."""
    return uuid.UUID(bytes=key_of(text_keyer(text_config), text))


@contextmanager
def texts_shared(conn: Conn) -> Iterator[None]:
    """Hold the texts lock shared for the block (a session lock: a load commits
    several transactions under it); waits while a collection runs."""
    conn.execute("SELECT pg_advisory_lock_shared(%s, %s)", _LOCK)
    with releasing(conn, "SELECT pg_advisory_unlock_shared(%s, %s)", _LOCK):
        yield


def texts_shared_xact_plan() -> Plan[None]:
    """Hold the texts lock shared until the current transaction ends."""
    yield Query("SELECT pg_advisory_xact_lock_shared(%s, %s)", _LOCK)


def texts_shared_xact(conn: Conn) -> None:
    """Hold the texts lock shared until the current transaction ends."""
    run(conn, texts_shared_xact_plan())


def new_texts_plan(texts: dict[bytes, tuple[str, str]]) -> Plan[dict[bytes, tuple[str, str]]]:
    """The ``texts`` (by 16-byte key) riido.texts does not hold yet (keys sent as one
    uuid[] literal, the stored ones returned as one bytea: no object per key on the
    way)."""
    found = yield Query(
        "SELECT coalesce(string_agg(uuid_send(key), ''::bytea), ''::bytea) "
        "FROM riido.texts WHERE key = ANY(%s::uuid[])",
        ("{" + ",".join(k.hex() for k in texts) + "}",),
        binary=True,
    )
    blob = bytes(found.one()[0])
    stored = {blob[i : i + 16] for i in range(0, len(blob), 16)}
    return {k: v for k, v in texts.items() if k not in stored}


def collect_garbage(conn: Conn) -> bool:
    """Remove the segments no snapshot holds, then the pending texts no document
    references, and a killed load's numbered documents, if no load is running (the
    texts lock is free); False when it had to leave them for a later collection.
    Must run outside a transaction."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", _LOCK).fetchone()
    if not (row and row[0]):
        return False
    with releasing(conn, "SELECT pg_advisory_unlock(%s, %s)", _LOCK), conn.transaction():
        conn.execute(sql_text("collect_segments"))
        conn.execute(sql_text("collect_texts"))
        # no load is running: what riido.load_stage holds is a killed load's
        conn.execute("DELETE FROM riido.load_stage")
    return True


def copy_texts(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Store on ``target`` the texts the documents of ``snapshot_id``'s path of
    segments reference on ``source`` (those it lacks), in key order, inside target's
    transaction, holding target's texts lock until that transaction ends (``snapshots
    move``)."""
    texts_shared_xact(target)
    target.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_texts_copy (LIKE riido.texts) ON COMMIT DELETE ROWS"
    )
    target.execute("TRUNCATE riido_texts_copy")
    out = (
        "COPY (SELECT t.key, t.body, t.tsv_raw, t.tsv_ident, t.len_raw, t.len_ident "
        "FROM riido.texts AS t WHERE t.key IN (SELECT d.text_key FROM riido.documents AS d "
        "JOIN riido.snapshot_segments AS p ON p.segment_id = d.segment_id "
        "WHERE p.snapshot_id = %s) ORDER BY t.key) TO STDOUT"
    )
    into = "COPY riido_texts_copy (key, body, tsv_raw, tsv_ident, len_raw, len_ident) FROM STDIN"
    with source.cursor().copy(out, (snapshot_id,)) as reader, target.cursor().copy(into) as w:
        for block in reader:
            w.write(block)
    target.execute(
        "INSERT INTO riido.texts SELECT * FROM riido_texts_copy ORDER BY key "
        "ON CONFLICT (key) DO NOTHING"
    )


def stored_digest(conn: Conn, snapshot_id: str, text_config: str) -> tuple[str, int]:
    """A stored snapshot's content digest recomputed from its rows, and the number of
    its documents whose text is missing or does not hash to its key."""
    row = conn.execute(
        sql.SQL(sql_template("snapshot_digest")).format(
            held=HELD, digest=sql.SQL(sql_template("digest"))
        ),
        {"snapshot_id": snapshot_id, "key_prefix": key_prefix(text_config)},
    ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])
