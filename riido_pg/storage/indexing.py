"""Indexing a load's new texts: both tsvectors computed and stored in riido.texts.

The loader sends the texts no snapshot holds yet (:func:`send_texts`: key, one
document id for messages, the text and its identifier-split form) into the session's
temporary table riido_texts_in, and :func:`store_texts` runs ``sql/insert_texts.sql``
over it, in key order, so every load takes the texts' row locks in one order and no
two loads deadlock. A worker does both for one chunk in a transaction of its own
(:func:`index_texts`); a one-connection load sends every chunk and stores them all at
its end. A text PostgreSQL cannot index (a word over :data:`MAX_WORD_BYTES`, a
tsvector over 1 MB) fails the load naming its document, or is left out and reported
when the caller asked for that (:class:`Skips`: a source tree's functions).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import psycopg

from riido_pg.errors import InvalidInput
from riido_pg.resources import sql_text
from riido_pg.server.connect import Conn
from riido_pg.server.plans import Copy, Plan, Query, run
from riido_pg.splitting import split_identifiers

__all__ = [
    "MAX_WORD_BYTES",
    "Skips",
    "index_texts",
    "send_plan",
    "send_texts",
    "store_plan",
    "store_texts",
]

#: The longest word PostgreSQL indexes, in UTF-8 bytes: it drops longer ones with a
#: notice ("word is too long to be indexed").
MAX_WORD_BYTES = 2047


class Skips:
    """Documents PostgreSQL cannot index, left out instead of failing the load (a
    source tree's: the caller has what it has) when ``report`` is given."""

    def __init__(self, report: Callable[[str, str], None] | None) -> None:
        self.report = report
        self.keys: set[uuid.UUID] = set()
        self.lock = threading.Lock()

    def add(self, doc_id: str, key: uuid.UUID, reason: str) -> None:
        with self.lock:
            self.keys.add(key)
            if self.report is not None:
                self.report(doc_id, reason)


_TEXTS_IN = (
    "CREATE TEMP TABLE IF NOT EXISTS riido_texts_in "
    '(key uuid, doc_id text COLLATE "C", body text, ident text) ON COMMIT DELETE ROWS'
)


def send_plan(texts: dict[bytes, tuple[str, str]], *, fresh: bool) -> Plan[None]:
    """COPY ``texts`` (16-byte key -> (doc_id, body)) with their split form into the
    session's riido_texts_in (emptied first when ``fresh``), in key order (the bytes'
    order is the uuids')."""
    yield Query(_TEXTS_IN)
    if fresh:
        yield Query("TRUNCATE riido_texts_in")
    rows = (
        (key.hex(), texts[key][0], texts[key][1], split_identifiers(texts[key][1]))
        for key in sorted(texts)
    )
    yield Copy("COPY riido_texts_in (key, doc_id, body, ident) FROM STDIN", rows)


def send_texts(conn: Conn, texts: dict[bytes, tuple[str, str]], *, fresh: bool) -> None:
    """:func:`send_plan` on a connection."""
    run(conn, send_plan(texts, fresh=fresh))


def index_texts(
    conn: Conn,
    texts: dict[bytes, tuple[str, str]],
    cfg: str,
    token: uuid.UUID,
    skips: Skips,
) -> None:
    """A worker: store one chunk's new texts in a transaction of its own."""
    with conn.transaction():
        send_texts(conn, texts, fresh=True)
        store_texts(conn, cfg, token, skips)


_SAVEPOINT = "riido_store_texts"


def store_plan(cfg: str, token: uuid.UUID | None, skips: Skips) -> Plan[None]:
    """Store the texts in riido_texts_in with both tsvectors, in key order (so loads
    storing the same new texts wait for each other in one order and never deadlock),
    inside the caller's transaction. InvalidInput names a document PostgreSQL cannot
    index (a tsvector over 1 MB, a word over 2,047 bytes) unless ``skips`` leaves
    such documents out."""
    detail = ""
    for _ in range(3):  # a retry can only find what the first pass hid
        bad: dict[uuid.UUID, tuple[str, str]] = {}  # key -> (doc_id, why)
        yield Query(f"SAVEPOINT {_SAVEPOINT}")  # keeps the input for diagnosis
        try:
            stored = yield Query(sql_text("insert_texts"), {"text_config": cfg, "token": token})
        except psycopg.errors.ProgramLimitExceeded as exc:
            yield Query(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
            detail = exc.diag.message_primary or ""
            bad = {k: (d, "too large") for k, d in (yield from _oversized(cfg))}
        else:
            if any("too long to be indexed" in n for n in stored.notices):
                yield Query(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
                bad = {k: (d, "long word") for k, d in (yield from _long_words(cfg))}
        yield Query(f"RELEASE SAVEPOINT {_SAVEPOINT}")
        if not bad:
            return
        if skips.report is None:
            culprit, why = min(bad.values())
            if why == "too large":
                raise InvalidInput(
                    f"document {culprit!r} is too large to index (PostgreSQL: {detail})"
                )
            raise InvalidInput(
                f"document {culprit!r} has a word of more than {MAX_WORD_BYTES} bytes, "
                "which PostgreSQL cannot index"
            )
        for key, (doc_id, why) in bad.items():
            reason = (
                "its tsvector is over PostgreSQL's 1 MB"
                if why == "too large"
                else f"a word of more than {MAX_WORD_BYTES} bytes"
            )
            skips.add(doc_id, key, reason)
        yield Query("DELETE FROM riido_texts_in WHERE key = ANY(%s)", (list(bad),))
    raise InvalidInput("documents could not be indexed after three tries")


def store_texts(conn: Conn, cfg: str, token: uuid.UUID | None, skips: Skips) -> None:
    """:func:`store_plan` on a connection (inside its transaction)."""
    run(conn, store_plan(cfg, token, skips))


def _long_words(cfg: str) -> Plan[list[tuple[uuid.UUID, str]]]:
    """(key, doc_id) of the staged texts holding a token PostgreSQL drops as too long."""
    result = yield Query(
        "SELECT i.key, i.doc_id FROM riido_texts_in AS i "
        "WHERE EXISTS (SELECT 1 FROM ts_parse("
        "  (SELECT cfgparser FROM pg_ts_config WHERE oid = %(cfg)s::regconfig), i.body || ' ' "
        "  || i.ident) AS t WHERE octet_length(t.token) > %(max)s)",
        {"cfg": cfg, "max": MAX_WORD_BYTES},
    )
    return [(r[0], str(r[1])) for r in result.rows]


def _oversized(cfg: str) -> Plan[list[tuple[uuid.UUID, str]]]:
    """(key, doc_id) of the staged texts whose tsvector exceeds PostgreSQL's 1 MB:
    batches of 500 first, then each text of a batch that fails."""
    probe = (
        "SELECT count(to_tsvector(%(cfg)s::regconfig, body)) "
        "+ count(to_tsvector(%(cfg)s::regconfig, ident)) FROM riido_texts_in "
        "WHERE key = ANY(%(keys)s::uuid[])"
    )

    def fails(keys: list[uuid.UUID]) -> Plan[bool]:
        yield Query("SAVEPOINT riido_probe")
        try:
            yield Query(probe, {"cfg": cfg, "keys": keys})
        except psycopg.errors.ProgramLimitExceeded:
            yield Query("ROLLBACK TO SAVEPOINT riido_probe")
            return True
        yield Query("RELEASE SAVEPOINT riido_probe")
        return False

    result = yield Query("SELECT key, doc_id FROM riido_texts_in ORDER BY key")
    rows = result.rows
    found = []
    for i in range(0, len(rows), 500):
        batch = rows[i : i + 500]
        if (yield from fails([r[0] for r in batch])):
            for r in batch:
                if (yield from fails([r[0]])):
                    found.append((r[0], str(r[1])))
    return found
