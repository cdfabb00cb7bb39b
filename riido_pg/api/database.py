"""The façade: one object for everything the command line does (sqlite-utils' pattern).

:class:`Database` wraps a connection -- psycopg, or a SQLAlchemy ``Connection`` or
``Session`` -- or a shard :class:`~riido_pg.shards.Router`; ``Database.open(dsn)``
opens one the way the CLI does (the DSN, ``RIIDO_PG_DSN``, or the embedded server).
Its methods load any kind of source, rank, evaluate, list, drop and move snapshots,
on whichever server of a coordinator holds the snapshot.

The layers (README "Python API"):

* :class:`Database` does what a command does: it tells source kinds apart
  (:mod:`riido_pg.sources`), loads and embeds (``model=``), places and finds
  snapshots on shards, stores and checks evaluation corpora. The CLI parses its
  arguments, makes one call here and renders the result.
* ``riido_pg.load_snapshot``, ``rank_snapshot``, ``rank_documents``,
  ``list_snapshots`` and the rest work on the one server their connection points
  at, and take documents, not paths. They stay as they are.

Every method runs inside the library's boundary (:mod:`riido_pg.server.errors`): the
connection rules of the README's "Python API" hold, and every failure is a
:class:`~riido_pg.errors.RiidoError`. Arguments are checked before the connection
is opened (a database opened by :meth:`Database.open` connects on first use).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from psycopg.pq import TransactionStatus

from riido_pg.api.evaluate import EvalOptions, evaluate_on
from riido_pg.api.history import Note, checked_target, history_on
from riido_pg.api.loading import Source, opened, store
from riido_pg.api.models import embed, load_model
from riido_pg.api.results import Evaluated, Listing, Loaded
from riido_pg.documents import RankRequest, check_snapshot_id
from riido_pg.errors import Hint, TransactionInProgress
from riido_pg.ranking import BM25, Ranking
from riido_pg.ranking.policies import policy_params
from riido_pg.server.connect import Conn
from riido_pg.server.errors import Connectable, boundary
from riido_pg.sources import TreeOptions
from riido_pg.storage import DEFAULT_TEXT_CONFIG, Progress, Snapshot

if TYPE_CHECKING:
    from riido_pg.ranking.texts import Found
    from riido_pg.shards import MovedSnapshot, Router, ShardInfo

__all__ = ["Database"]


@dataclass(frozen=True, slots=True)
class _Opened:
    """How :meth:`Database.open` connects, on first use."""

    dsn: str | None
    migrate: bool


class Database:
    """riido-pg over one connection (psycopg, SQLAlchemy) or a shard router.

    A connection given here stays the caller's (:meth:`close` leaves it open); one
    opened by :meth:`open` is closed by :meth:`close` or the ``with`` block.
    """

    def __init__(self, connection: Connectable | Router) -> None:
        self._given: object = connection
        self._owned: Conn | None = None
        self._router: Router | None = None

    @classmethod
    def open(cls, dsn: str | None = None, *, migrate: bool = True) -> Database:
        """A database opened as the CLI opens one: ``dsn``, else ``RIIDO_PG_DSN``, else
        the embedded server (started and migrated on demand; a named server must have
        the schema). It connects on first use."""
        return cls(_Opened(dsn, migrate))  # type: ignore[arg-type]

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the shard connections, and the connection :meth:`open` opened."""
        if self._router is not None:
            self._router.close()
            self._router = None
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    # -- the boundary ---------------------------------------------------------------

    def _target(self) -> object:
        if not isinstance(self._given, _Opened):
            return self._given
        if self._owned is None or self._owned.closed:
            from riido_pg.server.connect import connect

            self._owned = connect(self._given.dsn, migrate=self._given.migrate)
        return self._owned

    @contextmanager
    def _call(self, commits: str | None = None) -> Iterator[Router]:
        """The router of one call, inside the library's boundary."""
        from riido_pg.shards import Router

        with boundary(self._target(), commits=commits) as conn:
            assert conn is not None
            if isinstance(self._given, Router):
                yield self._given
                return
            if self._router is None or self._router.coordinator is not conn:
                if self._router is not None:  # the caller's connection changed (a new
                    self._router.close()  # SQLAlchemy transaction): its shards' go too
                self._router = Router(conn)
            yield self._router

    @staticmethod
    def _writable_here(router: Router, what: str) -> None:
        """Inside the caller's transaction, a write that would go to a shard commits on
        the shard's own connection: refuse it before anything is written."""
        from riido_pg.shards.catalog import shard_names

        conn = router.coordinator
        if conn.info.transaction_status == TransactionStatus.INTRANS and shard_names(conn):
            raise TransactionInProgress(
                f"{what} on a coordinator with shards commits on the shard's own "
                "connection, so it cannot run inside the caller's transaction; nothing "
                "was done",
                Hint(python="call it on an autocommit connection, outside a transaction"),
            )

    # -- snapshots ------------------------------------------------------------------

    def load(
        self,
        snapshot_id: str,
        source: Source,
        *,
        text_config: str = DEFAULT_TEXT_CONFIG,
        replace: bool = False,
        jobs: int | None = None,
        model: str | None = None,
        shard: str | None = None,
        tree: TreeOptions | None = None,
        progress: Progress | None = None,
        base: str | None = None,
        fresh: bool = False,
        **options: Any,
    ) -> Loaded:
        """Store ``source`` as the immutable snapshot ``snapshot_id``.

        ``source``: a path (a ``.json`` request file, a ``.jsonl`` file, a BEIR
        directory or a source tree, told apart by :func:`riido_pg.sources.source_kind`;
        ``tree`` says how a tree is read: languages, excludes, vendored and test code,
        and ``rev``, a git revision of the repository at the path, read without a
        checkout), a :class:`~riido_pg.sources.Table` (read where this database's
        connection points: through a coordinator, the coordinator's table), or any
        iterable of :class:`~riido_pg.Document`. ``jobs``: connections indexing at once
        (default: this machine's cores, at most 4; 1 inside the caller's transaction).
        ``model``: also embed every document with this learned hint source (on an
        unchanged snapshot only the embedding runs). ``shard``: place a new snapshot
        there. ``base``: store it on that snapshot (its documents shared, only the
        difference written; through a coordinator a new snapshot goes to the base's
        shard unless ``shard`` says otherwise); ``fresh``: self-contained; neither:
        the load picks a base itself, among the snapshots of the server it goes to
        (README "Snapshots on a base"). Other ``options`` go to
        :func:`riido_pg.load_snapshot` as they are.
        """
        from riido_pg.storage.loading import check_load_options

        check_snapshot_id(snapshot_id)
        check_load_options(jobs, base, fresh)
        if model is not None:
            load_model(model)  # an unknown or uninstalled model fails before any work
        docs, stats = opened(source, snapshot_id, tree, progress)
        parallel = f"a parallel load (jobs={jobs})" if jobs is not None and jobs > 1 else None
        with self._call(commits=parallel) as router:
            in_caller = router.coordinator.info.transaction_status == TransactionStatus.INTRANS
            self._writable_here(router, "loading a snapshot")
            if base is not None and shard is None and router.shard_of(snapshot_id) is None:
                shard = router.shard_of(base)  # a new snapshot goes where its base is
            with router.loading(snapshot_id, shard) as conn:
                result = store(
                    conn,
                    snapshot_id,
                    docs,
                    reader=router.coordinator,
                    text_config=text_config,
                    replace=replace,
                    progress=progress,
                    jobs=jobs if jobs is not None else (1 if in_caller else _default_jobs()),
                    base=base,
                    fresh=fresh,
                    **options,
                )
                embedded = model is not None and embed(conn, snapshot_id, model, progress)
        return Loaded(result, model if embedded else None, stats)

    def get(self, snapshot_id: str) -> Snapshot:
        """The ready snapshot ``snapshot_id``, wherever it is."""
        from riido_pg.storage import get_snapshot

        check_snapshot_id(snapshot_id)
        with self._call() as router:
            return router.run(snapshot_id, lambda conn: get_snapshot(conn, snapshot_id))

    def snapshots(self) -> Listing:
        """Every snapshot: the coordinator's own (any state) and those on its shards."""
        from riido_pg.shards import list_snapshots

        with self._call() as router:
            snaps, unreachable = list_snapshots(router)
        return Listing(snaps, list(unreachable))

    def drop(self, snapshot_id: str) -> None:
        """Remove a snapshot (from the server holding it)."""
        from riido_pg.shards import drop_snapshot

        check_snapshot_id(snapshot_id)
        with self._call() as router:
            if router.shard_of(snapshot_id) is not None:
                self._writable_here(router, "dropping a snapshot")
            drop_snapshot(router, snapshot_id)

    def move(self, snapshot_id: str, shard: str, *, replace: bool = False) -> MovedSnapshot:
        """Move a snapshot to ``shard``: where it came from (None: the coordinator), and
        a note when its old copy could not be removed (README "More than one server").
        A ready snapshot of that id the shard holds already (not placed there) is
        :class:`~riido_pg.errors.SnapshotExists` unless ``replace``."""
        from riido_pg.shards import move_snapshot

        check_snapshot_id(snapshot_id)
        with self._call(commits="moving a snapshot") as router:
            return move_snapshot(router, snapshot_id, shard, replace=replace)

    # -- ranking --------------------------------------------------------------------

    def rank(
        self,
        snapshot_id: str,
        query: str,
        *,
        policy: str = BM25,
        limit: int | None = None,
        hints: Sequence[str] | None = None,
        fused_weight: float | None = None,
        model: str | None = None,
        params: Mapping[str, float] | None = None,
    ) -> Ranking:
        """Rank a stored snapshot for ``query`` (:func:`riido_pg.rank_snapshot`, on the
        server holding it)."""
        from riido_pg.ranking.rank import RankOptions, rank_checked

        check_snapshot_id(snapshot_id)
        opts = RankOptions.check(
            query, policy, limit, hints, policy_params(fused_weight, params), model
        )
        with self._call() as router:
            return router.run(
                snapshot_id, lambda conn: rank_checked(conn, snapshot_id, query, opts)
            )

    def search(self, snapshot_id: str, query: str, *, policy: str, limit: int) -> Found:
        """:meth:`rank` (no hints, no model) and the stored text of each candidate, read
        in the ranking's transaction (what ``riido-pg mcp`` answers)."""
        from riido_pg.ranking.rank import RankOptions
        from riido_pg.ranking.texts import rank_with_texts

        check_snapshot_id(snapshot_id)
        opts = RankOptions.check(query, policy, limit, None, None, None)
        with self._call() as router:
            return router.run(
                snapshot_id, lambda conn: rank_with_texts(conn, snapshot_id, query, opts)
            )

    def rank_documents(
        self,
        request: RankRequest,
        *,
        policy: str = BM25,
        text_config: str = DEFAULT_TEXT_CONFIG,
        limit: int | None = None,
        hints: Sequence[str] | None = None,
        fused_weight: float | None = None,
        model: str | None = None,
        params: Mapping[str, float] | None = None,
    ) -> Ranking:
        """Rank the request's documents, keeping nothing (``riido-pg hints``)."""
        from riido_pg.ranking.rank import RankOptions, rank_documents_checked

        opts = RankOptions.check(
            request.query, policy, limit, hints, policy_params(fused_weight, params), model
        )
        with self._call() as router:
            return rank_documents_checked(router.coordinator, request, text_config, opts)

    # -- evaluation -----------------------------------------------------------------

    def evaluate(
        self,
        corpus: Path | str | Sequence[Path | str] | None = None,
        *,
        snapshot: str | None = None,
        policies: Sequence[str] | None = None,
        text_config: str | None = None,
        run_dir: Path | None = None,
        run_depth: int | None = None,
        fused_weight: float | None = None,
        model: str | None = None,
        progress: Progress | None = None,
        note: Note | None = None,
        params: Mapping[str, float] | None = None,
    ) -> Evaluated:
        """Evaluate policies on a BEIR directory ``corpus`` (stored as a snapshot where
        a load of it would go, or reused when stored already), on history corpora
        (``corpus``: one directory or several, each question ranked in its own
        snapshot, the missing ones loaded from the repository and reused afterwards)
        or on the stored corpus ``snapshot``: Recall@1, Recall@10, MRR, mean
        first-target rank (README "Evaluation"). ``policies``: default every policy
        that needs nothing per question (and the model's with ``model``, which also
        embeds the corpus); ``text_config``: for directories, the configuration to
        store them with (default english; a history corpus's stored snapshots must
        have it); for a snapshot, the one it must have. ``note`` receives a line per
        step of a long run (``loading snapshot 3/46 …``)."""
        from riido_pg.evaluation import DEFAULT_RUN_DEPTH, check_policies

        path, corpora = checked_target(corpus, snapshot)
        chosen = check_policies(policies, model)
        if model is not None:
            load_model(model)
        depth = DEFAULT_RUN_DEPTH if run_depth is None else run_depth
        given = policy_params(fused_weight, params)
        options = EvalOptions(chosen, text_config, run_dir, depth, given, model, progress)
        with self._call() as router:
            if path is not None or corpora is not None:
                self._writable_here(router, "storing a corpus")
            if corpora is None:
                return evaluate_on(router, path, snapshot, options)
            in_caller = router.coordinator.info.transaction_status == TransactionStatus.INTRANS
            jobs = 1 if in_caller else _default_jobs()
            return history_on(router, corpora, options, jobs=jobs, note=note)

    # -- shards and roles -----------------------------------------------------------

    def add_shard(self, name: str, dsn: str, *, password: str | None = None) -> None:
        """Register the database at ``dsn`` as shard ``name`` of this coordinator;
        ``password`` (e.g. read from a file) instead of one in the DSN."""
        from riido_pg.shards import add_shard

        with self._call(commits="adding a shard") as router:
            add_shard(router.coordinator, name, dsn, password=password)

    def shards(self) -> list[ShardInfo]:
        """This coordinator's shards (never their credentials)."""
        from riido_pg.shards import list_shards

        with self._call() as router:
            return list_shards(router.coordinator)

    def remove_shard(self, name: str) -> None:
        """Unregister a shard that holds no snapshot."""
        from riido_pg.shards import remove_shard

        with self._call() as router:
            remove_shard(router.coordinator, name)

    def upgrade_shards(self, revision: str = "head") -> list[tuple[str, str | None]]:
        """Migrate every shard of this (already upgraded) coordinator to ``revision``:
        each shard's name and its revision afterwards (``riido-pg db upgrade``)."""
        from riido_pg.shards import upgrade_shards

        with self._call() as router:
            return upgrade_shards(router.coordinator, revision)

    def grant_reader(self, role: str) -> None:
        """Let ``role`` (an existing role) query snapshots and nothing else."""
        from riido_pg.server.privileges import grant_reader

        with self._call() as router:
            grant_reader(router.coordinator, role)


def _default_jobs() -> int:
    from riido_pg.storage.loading import default_jobs

    return default_jobs()
