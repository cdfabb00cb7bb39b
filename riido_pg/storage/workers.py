"""Worker sessions of a parallel load (``--jobs N``).

:func:`connections` opens more sessions to the server of the caller's connection, as
the same role (its parameters and password), each under the load timeout;
:class:`Workers` runs one thread per session, taking jobs from a bounded queue. A job
(:data:`Job`) is one whole chunk of the input: it looks up which of the chunk's texts
are stored already and hands the others to :meth:`Workers.index`, which stores them
up to :data:`BATCH` at a time in a transaction of their own
(:func:`~riido_pg.storage.indexing.index_texts`); the loader's reading thread never
waits for a look-up (:mod:`riido_pg.storage.staging`). The reading thread sees a
worker's error at its next hand-over and re-raises it; :meth:`Workers.abort` cancels
what the sessions run.
"""

from __future__ import annotations

import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import psycopg

from riido_pg.errors import Hint, TooManyConnections
from riido_pg.server.connect import Conn
from riido_pg.storage.indexing import Skips, index_texts
from riido_pg.storage.timeouts import load_timeout_ms

__all__ = ["Job", "Workers", "connections", "worker_connection", "worker_connections"]

#: What a worker runs for one hand-over, on its session (autocommit outside the
#: transactions it opens itself).
Job = Callable[[Conn], None]

#: New texts a worker gathers before it stores them, in one transaction: a load that
#: changes little finds a few new texts in each chunk, and storing each chunk's few
#: in a transaction of their own cost seven round trips a chunk.
BATCH = 2_000


class Workers:
    """Worker connections indexing texts while the client reads (``jobs`` > 1)."""

    def __init__(self, conns: list[Conn], cfg: str, token: uuid.UUID, skips: Skips) -> None:
        self.conns = conns
        self.cfg = cfg
        self.token = token
        self.skips = skips
        self.queue: queue.Queue[Job | None] = queue.Queue(maxsize=2 * len(conns))
        self.errors: list[BaseException] = []
        self.failed = threading.Event()
        #: Each worker session's gathered new texts (only its own thread touches them).
        self.pending: dict[int, dict[bytes, tuple[str, str]]] = {id(c): {} for c in conns}
        self.threads = [
            threading.Thread(target=self._run, args=(c,), name=f"riido-load-{i}", daemon=True)
            for i, c in enumerate(conns)
        ]
        for t in self.threads:
            t.start()

    def _run(self, conn: Conn) -> None:
        stopped = False  # the thread's stop taken from the queue
        try:
            while (job := self.queue.get()) is not None:
                if self.failed.is_set():
                    continue
                job(conn)
            stopped = True
            if not self.failed.is_set():
                self._store(conn)  # what it gathered since its last batch
        except BaseException as exc:  # reported by the reading thread
            self.errors.append(exc)
            self.failed.set()
            # keep draining so the reader never blocks on a full queue (up to this
            # thread's stop, unless it had it already: then nothing more comes)
            while not stopped and self.queue.get() is not None:
                pass

    def check(self) -> None:
        if self.errors:
            raise self.errors[0]

    def index(self, conn: Conn, texts: dict[bytes, tuple[str, str]]) -> None:
        """Store ``texts`` (16-byte key -> (doc_id, body)) on a worker's ``conn``: gathered
        until :data:`BATCH` are, then stored in a transaction of their own, their keys
        pending under the load's token (the rest when the input ends)."""
        pending = self.pending[id(conn)]
        pending.update(texts)
        if len(pending) >= BATCH:
            self._store(conn)

    def _store(self, conn: Conn) -> None:
        """Store the texts ``conn``'s worker gathered."""
        pending = self.pending[id(conn)]
        if pending:
            index_texts(conn, pending, self.cfg, self.token, self.skips)
            self.pending[id(conn)] = {}

    def put(self, job: Job) -> None:
        while True:
            self.check()
            try:
                self.queue.put(job, timeout=0.2)
                return
            except queue.Full:
                continue

    def finish(self) -> None:
        """Wait for every chunk to be stored; the first worker error, if any."""
        for _ in self.threads:
            self.put_stop()
        for t in self.threads:
            while t.is_alive():
                t.join(timeout=0.2)
        self.check()

    def put_stop(self) -> None:
        while True:
            try:
                self.queue.put(None, timeout=0.2)
                return
            except queue.Full:
                if not any(t.is_alive() for t in self.threads):
                    return

    def abort(self) -> None:
        """Stop at once: cancel what the workers run, let the threads end."""
        self.failed.set()
        for conn in self.conns:
            with suppress(Exception):
                conn.cancel_safe(timeout=5)
        with suppress(queue.Empty):
            while True:
                self.queue.get_nowait()
        for _ in self.threads:
            with suppress(queue.Full):
                self.queue.put_nowait(None)
        for t in self.threads:
            t.join(timeout=10)


def worker_connections(conn: Conn, n: int) -> list[Conn]:
    """``n`` more sessions to the server of ``conn``, as the same role, autocommit."""
    params: dict[str, object] = dict(conn.info.get_parameters())
    password = conn.info.password
    if password:
        params["password"] = password
    out: list[Conn] = []
    try:
        for _ in range(n):
            try:
                c = psycopg.connect(autocommit=True, **params)  # type: ignore[arg-type]
            except psycopg.OperationalError as exc:
                if _refused(exc):
                    raise TooManyConnections(
                        f"the server refused more connections ({_first(exc)}): a load with "
                        f"{n} workers needs {n + 1} sessions; nothing was stored",
                        Hint("load with --jobs 1", "load with jobs=1"),
                    ) from exc
                raise
            out.append(c)
            # a load's session: bounded by its input, not by the query timeout
            c.execute(
                "SELECT set_config('statement_timeout', %s, false)", (str(load_timeout_ms()),)
            )
    except BaseException:
        for c in out:
            c.close()
        raise
    return out


def _refused(exc: psycopg.OperationalError) -> bool:
    """The server (or the role) is at its connection limit."""
    text = str(exc)
    return any(
        m in text
        for m in (
            "too many connections",
            "too many clients",
            "remaining connection slots are reserved",
        )
    )


def _first(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    last = lines[-1] if lines else type(exc).__name__
    return last.removeprefix("FATAL:").strip()


@contextmanager
def connections(conn: Conn, n: int) -> Iterator[list[Conn]]:
    conns = worker_connections(conn, n) if n else []
    try:
        yield conns
    finally:
        for c in conns:
            with suppress(Exception):
                c.close()


@contextmanager
def worker_connection(conn: Conn) -> Iterator[Conn]:
    """One more session to the server of ``conn``, as the same role, for the block."""
    with connections(conn, 1) as conns:
        yield conns[0]
