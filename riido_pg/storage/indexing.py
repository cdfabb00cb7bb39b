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
from riido_pg.splitting import split_identifiers

__all__ = ["MAX_WORD_BYTES", "Skips", "index_texts", "send_texts", "store_texts"]

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


class _Retry(Exception):
    """Roll the chunk's insert back: some of its texts cannot be indexed."""


def send_texts(conn: Conn, texts: dict[bytes, tuple[str, str]], *, fresh: bool) -> None:
    """COPY ``texts`` (16-byte key -> (doc_id, body)) with their split form into the
    session's riido_texts_in (emptied first when ``fresh``), in key order (the bytes'
    order is the uuids')."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS riido_texts_in "
        '(key uuid, doc_id text COLLATE "C", body text, ident text) ON COMMIT DELETE ROWS'
    )
    if fresh:
        conn.execute("TRUNCATE riido_texts_in")
    with conn.cursor().copy("COPY riido_texts_in (key, doc_id, body, ident) FROM STDIN") as cp:
        for key in sorted(texts):
            doc_id, body = texts[key]
            cp.write_row((key.hex(), doc_id, body, split_identifiers(body)))


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


def store_texts(conn: Conn, cfg: str, token: uuid.UUID | None, skips: Skips) -> None:
    """Store the texts in riido_texts_in with both tsvectors, in key order (so loads
    storing the same new texts wait for each other in one order and never deadlock),
    inside the caller's transaction. InvalidInput names a document PostgreSQL cannot
    index (a tsvector over 1 MB, a word over 2,047 bytes) unless ``skips`` leaves
    such documents out."""
    notices: list[str] = []
    detail = ""

    def on_notice(diag: psycopg.errors.Diagnostic) -> None:
        if diag.message_primary:
            notices.append(diag.message_primary)

    conn.add_notice_handler(on_notice)
    try:
        for _ in range(3):  # a retry can only find what the first pass hid
            notices.clear()
            bad: dict[uuid.UUID, tuple[str, str]] = {}  # key -> (doc_id, why)
            try:
                with conn.transaction():  # savepoint: keeps the input for diagnosis
                    conn.execute(sql_text("insert_texts"), {"text_config": cfg, "token": token})
                    if any("too long to be indexed" in n for n in notices):
                        bad = {k: (d, "long word") for k, d in _long_words(conn, cfg)}
                        raise _Retry
            except psycopg.errors.ProgramLimitExceeded as exc:
                bad = {k: (d, "too large") for k, d in _oversized(conn, cfg)}
                detail = exc.diag.message_primary or ""
            except _Retry:
                pass
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
            conn.execute("DELETE FROM riido_texts_in WHERE key = ANY(%s)", (list(bad),))
        raise InvalidInput("documents could not be indexed after three tries")
    finally:
        conn.remove_notice_handler(on_notice)


def _long_words(conn: Conn, cfg: str) -> list[tuple[uuid.UUID, str]]:
    """(key, doc_id) of the staged texts holding a token PostgreSQL drops as too long."""
    rows = conn.execute(
        "SELECT i.key, i.doc_id FROM riido_texts_in AS i "
        "WHERE EXISTS (SELECT 1 FROM ts_parse("
        "  (SELECT cfgparser FROM pg_ts_config WHERE oid = %(cfg)s::regconfig), i.body || ' ' "
        "  || i.ident) AS t WHERE octet_length(t.token) > %(max)s)",
        {"cfg": cfg, "max": MAX_WORD_BYTES},
    ).fetchall()
    return [(r[0], str(r[1])) for r in rows]


def _oversized(conn: Conn, cfg: str) -> list[tuple[uuid.UUID, str]]:
    """(key, doc_id) of the staged texts whose tsvector exceeds PostgreSQL's 1 MB:
    batches of 500 first, then each text of a batch that fails."""
    probe = (
        "SELECT count(to_tsvector(%(cfg)s::regconfig, body)) "
        "+ count(to_tsvector(%(cfg)s::regconfig, ident)) FROM riido_texts_in "
        "WHERE key = ANY(%(keys)s::uuid[])"
    )

    def fails(keys: list[uuid.UUID]) -> bool:
        try:
            with conn.transaction():
                conn.execute(probe, {"cfg": cfg, "keys": keys})
        except psycopg.errors.ProgramLimitExceeded:
            return True
        return False

    rows = conn.execute("SELECT key, doc_id FROM riido_texts_in ORDER BY key").fetchall()
    found = []
    for i in range(0, len(rows), 500):
        batch = rows[i : i + 500]
        if fails([r[0] for r in batch]):
            found += [(r[0], str(r[1])) for r in batch if fails([r[0]])]
    return found
