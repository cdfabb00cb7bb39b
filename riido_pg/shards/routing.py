"""Finding the server that owns a snapshot, and the commands that span shards.

:class:`Router` is the one way commands reach a snapshot: ``riido.placements`` names
its shard (no row: the coordinator's own tables hold it, as on a single server), and
the router opens (and keeps) a direct connection to that shard, on which the
unchanged single-server code runs. New snapshots are placed on the shard with the
fewest documents (ties: the first name), unless a shard is named.

Placement changes of one snapshot id serialize on the coordinator: a load through
the coordinator, ``snapshots move`` and ``snapshots drop`` hold the id's writer lock
there (:func:`~riido_pg.storage.snapshots.snapshot_lock`) for their duration, and a
load or move holds its shard's lock shared (:mod:`riido_pg.shards.locks`), so
``shards remove`` never removes a shard under them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

import psycopg

from riido_pg.documents import check_snapshot_id
from riido_pg.errors import (
    ConflictingOptions,
    DatabaseUnavailable,
    Hint,
    PermissionDenied,
    ReadOnlyServer,
    RiidoError,
    ShardNotFound,
    ShardUnavailable,
    SnapshotBusy,
    SnapshotLoading,
    SnapshotNotFound,
)
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.shards.catalog import no_shard, open_shard, require_writable, shard_names
from riido_pg.shards.locks import shard_shared
from riido_pg.storage import snapshots as local

__all__ = ["PlacedSnapshot", "Router", "collect_strays", "drop_snapshot", "list_snapshots"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class PlacedSnapshot:
    """A snapshot and the shard holding it (None: the coordinator itself)."""

    snapshot: local.Snapshot
    shard: str | None


class Router:
    """The connections that own snapshots, from a coordinator connection.

    With no shard registered every snapshot is the coordinator's, so a single server
    works unchanged. Shard connections are opened on first use and closed with the
    router (use it as a context manager).
    """

    def __init__(self, coordinator: Conn) -> None:
        self.coordinator = coordinator
        self._open: dict[str, Conn] = {}
        self._load: ExitStack | None = None
        self._placed: tuple[str, str] | None = None

    def __enter__(self) -> Router:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the load :meth:`for_load` began, if any, and close the shard connections."""
        try:
            self.end_load()
        finally:
            for conn in self._open.values():
                conn.close()
            self._open.clear()

    @translated
    def shard_of(self, snapshot_id: str) -> str | None:
        """The shard the catalog places the snapshot on, or None (the coordinator)."""
        row = self.coordinator.execute(
            "SELECT shard FROM riido.placements WHERE snapshot_id = %s", (snapshot_id,)
        ).fetchone()
        return str(row[0]) if row else None

    def connection(self, shard: str | None) -> Conn:
        """The coordinator (``None``) or the named shard's connection."""
        if shard is None:
            return self.coordinator
        conn = self._open.get(shard)
        if conn is None or conn.closed or conn.broken:
            conn = self._open[shard] = open_shard(self.coordinator, shard)
        return conn

    def owner(self, snapshot_id: str) -> Conn:
        """The connection whose riido tables hold the snapshot."""
        return self.connection(self.shard_of(snapshot_id))

    def run(self, snapshot_id: str, work: Callable[[Conn], R]) -> R:
        """``work(owner)`` for a reader. A snapshot moved between finding its owner and
        reading it (its old copy gone, or already marked for removal) is read again
        from its new owner, so a reader never finds none."""
        shard = self.shard_of(snapshot_id)
        try:
            return self._on(shard, work)
        except (SnapshotNotFound, SnapshotLoading):
            moved = self.shard_of(snapshot_id)
            if moved == shard:
                raise
            return self._on(moved, work)

    def _on(self, shard: str | None, work: Callable[[Conn], R]) -> R:
        conn = self.connection(shard)
        try:
            return work(conn)
        except (PermissionDenied, ReadOnlyServer, ShardUnavailable):
            raise
        except DatabaseUnavailable as exc:
            if shard is None:
                raise
            self._open.pop(shard, None)
            raise ShardUnavailable(
                f"shard {shard!r} is unavailable: {exc.message}", exc.hint
            ) from exc

    def holds(self, shard: str | None, snapshot_id: str) -> bool:
        """Whether the server has a row of the snapshot in any state."""
        row = (
            self.connection(shard)
            .execute(
                "SELECT EXISTS (SELECT 1 FROM riido.snapshots WHERE snapshot_id = %s)",
                (snapshot_id,),
            )
            .fetchone()
        )
        return bool(row and row[0])

    @translated
    def for_load(self, snapshot_id: str, shard: str | None = None) -> Conn:
        """The (writable) connection a load of ``snapshot_id`` writes to: its owner when
        it exists, else ``shard`` or the shard with the fewest documents, recorded in
        the catalog before the load starts.

        The load lasts until the router's next ``for_load``, :meth:`end_load` or
        :meth:`close` (:meth:`loading` bounds it by a block): meanwhile the shard
        cannot be removed and no other load, move or drop of the id runs through
        this coordinator (SnapshotBusy). When it ends, a placement whose shard did not
        get the snapshot (the load failed) is removed.
        """
        check_snapshot_id(snapshot_id)
        self.end_load()
        names = shard_names(self.coordinator)
        if shard is not None and shard not in names:
            raise ShardNotFound(*no_shard(shard, names))
        if not names:  # a single server
            require_writable(self.coordinator, "the server")
            return self.coordinator
        held = ExitStack()
        try:
            held.enter_context(local.snapshot_lock(self.coordinator, snapshot_id))
            target, placed = self._target(snapshot_id, shard, names)
            if target is not None:
                held.enter_context(shard_shared(self.coordinator, target))
                if target not in shard_names(self.coordinator):  # removed meanwhile
                    raise ShardNotFound(f"no shard {target!r}")
            conn = self.connection(target)
            require_writable(conn, f"shard {target!r}" if target else "the server")
            if target is not None and not placed:
                require_writable(self.coordinator, "the coordinator")
                self.coordinator.execute(
                    "INSERT INTO riido.placements (snapshot_id, shard) VALUES (%s, %s)",
                    (snapshot_id, target),
                )
            if target is not None:
                self._placed = (snapshot_id, target)
            collect_strays(self, target)
        except BaseException:
            self._placed = None
            held.close()
            raise
        self._load = held
        return conn

    def _target(
        self, snapshot_id: str, shard: str | None, names: list[str]
    ) -> tuple[str | None, bool]:
        """Where a load of the id goes (None: the coordinator), and whether the catalog
        places it there already; under the id's lock. A placement whose shard never got
        the snapshot is no home: it is removed."""
        placed = self.shard_of(snapshot_id)
        if placed is not None and not self.holds(placed, snapshot_id):
            require_writable(self.coordinator, "the coordinator")
            self.coordinator.execute(
                "DELETE FROM riido.placements WHERE snapshot_id = %s", (snapshot_id,)
            )
            placed = None
        if placed is None and local.find_snapshot(self.coordinator, snapshot_id):
            target = None  # a snapshot stored before the shards
        else:
            target = placed or shard or self._emptiest(names)
        if shard is not None and target != shard:
            where = f"shard {target!r}" if target else "the coordinator"
            move = shell_command("riido-pg", "snapshots", "move", snapshot_id, shard)
            raise ConflictingOptions(
                f"snapshot {snapshot_id!r} is on {where}, not {shard!r}",
                Hint(
                    f"load it without --shard, or move it first (`{move}`)",
                    "load it without shard=, or move it first (move_snapshot())",
                ),
            )
        return target, placed is not None

    def end_load(self) -> None:
        """End the load :meth:`for_load` began: remove its placement if the shard did
        not get the snapshot, and release the locks it held."""
        held, placed = self._load, self._placed
        self._load = self._placed = None
        if held is None:
            return
        with held:
            if placed is not None:
                snapshot_id, shard = placed
                with suppress(RiidoError, psycopg.Error):  # kept: the next load sees it is stale
                    if not self.holds(shard, snapshot_id):
                        self.coordinator.execute(
                            "DELETE FROM riido.placements WHERE snapshot_id = %s AND shard = %s",
                            (snapshot_id, shard),
                        )

    @contextmanager
    def loading(self, snapshot_id: str, shard: str | None = None) -> Iterator[Conn]:
        """:meth:`for_load` for the block: the load ends with it."""
        conn = self.for_load(snapshot_id, shard)
        try:
            yield conn
        finally:
            self.end_load()

    def _emptiest(self, names: list[str]) -> str:
        """The shard holding the fewest documents (every shard must answer)."""

        def documents(name: str) -> int:
            row = (
                self.connection(name)
                .execute("SELECT coalesce(sum(document_count), 0) FROM riido.snapshots")
                .fetchone()
            )
            return int(row[0]) if row else 0

        return min(names, key=lambda n: (documents(n), n))


def collect_strays(router: Router, server: str | None) -> None:
    """Remove, on ``server`` (None: the coordinator), the copies nothing reads: a
    ``loading`` row nobody writes of a snapshot placed on another server (the old copy
    of a move whose clean-up was cut short, a copy an interrupted move left), or, on a
    shard, of a snapshot placed nowhere. Best effort: what cannot be removed now (a
    writer holds it, a server does not answer) is left for the next load, move or drop
    on that server. Ready snapshots are never touched."""
    coordinator = router.coordinator
    try:
        conn = router.connection(server)
        rows = conn.execute("SELECT snapshot_id FROM riido.snapshots WHERE state = 'loading'")
        for snapshot_id in [str(r[0]) for r in rows]:
            with suppress(SnapshotBusy), local.snapshot_lock(coordinator, snapshot_id):
                if router.shard_of(snapshot_id) == server:
                    continue  # its own: a load running or interrupted there
                with local.snapshot_lock(conn, snapshot_id):
                    found = local.find_snapshot(conn, snapshot_id)
                    if found is not None and found.state == "loading":
                        local.drop_snapshot(conn, snapshot_id)
    except (RiidoError, psycopg.Error):
        pass


@translated
def list_snapshots(router: Router) -> tuple[list[PlacedSnapshot], list[RiidoError]]:
    """Every snapshot the coordinator knows: its own (any state; not the old copy of
    one placed on a shard) and those placed on a shard that has them ``ready``; plus
    the error of each shard that did not answer."""
    coordinator = router.coordinator
    placements = dict(coordinator.execute("SELECT snapshot_id, shard FROM riido.placements"))
    out = [
        PlacedSnapshot(s, None)
        for s in local.list_snapshots(coordinator)
        if s.snapshot_id not in placements
    ]
    errors: list[RiidoError] = []
    for name in shard_names(coordinator):
        placed = [sid for sid, where in placements.items() if where == name]
        if not placed:
            continue
        try:
            snaps = router.connection(name).execute(
                local.SNAPSHOT_COLUMNS + " WHERE s.snapshot_id = ANY(%s) AND s.state = 'ready'",
                (placed,),
            )
            out.extend(PlacedSnapshot(local.snapshot_from_row(r), name) for r in snaps)
        except ShardUnavailable as exc:
            errors.append(exc)
    out.sort(key=lambda p: p.snapshot.snapshot_id.encode())
    return out, errors


@translated
def drop_snapshot(router: Router, snapshot_id: str) -> None:
    """Remove a snapshot from its owner, then its placement (and the old copies a
    cut-short move left of it)."""
    check_snapshot_id(snapshot_id)
    coordinator = router.coordinator
    if not shard_names(coordinator):  # a single server
        local.drop_snapshot(coordinator, snapshot_id)
        return
    with local.snapshot_lock(coordinator, snapshot_id):
        shard = router.shard_of(snapshot_id)
        if shard is None:
            local.drop_snapshot(coordinator, snapshot_id)
            return
        conn = router.connection(shard)
        require_writable(coordinator, "the coordinator")
        try:
            local.drop_snapshot(conn, snapshot_id)
        except SnapshotNotFound:
            pass  # placed by a load that never wrote it
        collect_strays(router, shard)
        collect_strays(router, None)
        coordinator.execute("DELETE FROM riido.placements WHERE snapshot_id = %s", (snapshot_id,))
