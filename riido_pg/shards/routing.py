"""Finding the server that owns a snapshot, and the commands that span shards.

:class:`Router` is the one way commands reach a snapshot: ``riido.placements`` names
its shard (no row: the coordinator's own tables hold it, as on a single server), and
the router opens (and keeps) a direct connection to that shard, on which the
unchanged single-server code runs. New snapshots are placed on the shard with the
fewest documents (ties: the first name), unless a shard is named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

from psycopg import sql

from riido_pg.documents import check_snapshot_id
from riido_pg.errors import (
    ConflictingOptions,
    DatabaseUnavailable,
    Hint,
    InvalidInput,
    PermissionDenied,
    ReadOnlyServer,
    RiidoError,
    ShardNotFound,
    ShardUnavailable,
    SnapshotNotFound,
)
from riido_pg.quoting import shell_command
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translated
from riido_pg.shards.catalog import no_shard, open_shard, require_writable, shard_names
from riido_pg.storage import snapshots as local
from riido_pg.storage.texts import copy_texts, stored_digest

__all__ = ["PlacedSnapshot", "Router", "drop_snapshot", "list_snapshots", "move_snapshot"]

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

    def __enter__(self) -> Router:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
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
        reading it is read again from its new owner, so a reader never finds none."""
        shard = self.shard_of(snapshot_id)
        try:
            return self._on(shard, work)
        except SnapshotNotFound:
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

    @translated
    def for_load(self, snapshot_id: str, shard: str | None = None) -> Conn:
        """The (writable) connection a load of ``snapshot_id`` writes to: its owner when
        it exists, else ``shard`` or the shard with the fewest documents, recorded in
        the catalog before the load starts."""
        check_snapshot_id(snapshot_id)
        names = shard_names(self.coordinator)
        if shard is not None and shard not in names:
            raise ShardNotFound(*no_shard(shard, names))
        placed = self.shard_of(snapshot_id)
        if placed is None and (not names or local.find_snapshot(self.coordinator, snapshot_id)):
            target = None  # a single server, or a snapshot stored before the shards
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
        conn = self.connection(target)
        require_writable(conn, f"shard {target!r}" if target else "the server")
        if target is not None and placed is None:
            require_writable(self.coordinator, "the coordinator")
            self.coordinator.execute(
                "INSERT INTO riido.placements (snapshot_id, shard) VALUES (%s, %s) "
                "ON CONFLICT (snapshot_id) DO NOTHING",
                (snapshot_id, target),
            )
            if self.shard_of(snapshot_id) != target:  # a concurrent load placed it first
                return self.for_load(snapshot_id, shard)
        return conn

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


@translated
def list_snapshots(router: Router) -> tuple[list[PlacedSnapshot], list[RiidoError]]:
    """Every snapshot the coordinator knows: its own (any state) and those placed on a
    shard that has them ``ready``; plus the error of each shard that did not answer."""
    coordinator = router.coordinator
    out = [PlacedSnapshot(s, None) for s in local.list_snapshots(coordinator)]
    errors: list[RiidoError] = []
    for name in shard_names(coordinator):
        placed = [
            str(r[0])
            for r in coordinator.execute(
                "SELECT snapshot_id FROM riido.placements WHERE shard = %s", (name,)
            )
        ]
        if not placed:
            continue
        try:
            snaps = router.connection(name).execute(
                local.SNAPSHOT_COLUMNS + " WHERE snapshot_id = ANY(%s) AND state = 'ready'",
                (placed,),
            )
            out.extend(PlacedSnapshot(local.Snapshot(*r), name) for r in snaps)
        except ShardUnavailable as exc:
            errors.append(exc)
    out.sort(key=lambda p: p.snapshot.snapshot_id.encode())
    return out, errors


@translated
def drop_snapshot(router: Router, snapshot_id: str) -> None:
    """Remove a snapshot from its owner, then its placement."""
    check_snapshot_id(snapshot_id)
    shard = router.shard_of(snapshot_id)
    if shard is None:
        local.drop_snapshot(router.coordinator, snapshot_id)
        return
    conn = router.connection(shard)
    require_writable(router.coordinator, "the coordinator")
    try:
        local.drop_snapshot(conn, snapshot_id)
    except SnapshotNotFound:
        pass  # placed by a load that never wrote it
    router.coordinator.execute(
        "DELETE FROM riido.placements WHERE snapshot_id = %s", (snapshot_id,)
    )


def _content_tables(conn: Conn) -> list[tuple[str, list[str]]]:
    """riido's tables keyed by snapshot, parents before children, with their columns."""
    rows = conn.execute(
        "SELECT c.relname, "
        "  array(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid "
        "        AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum), "
        "  array(SELECT f.confrelid::regclass::text FROM pg_constraint f "
        "        WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'riido' AND c.relkind = 'r' AND c.relname <> 'placements' "
        "AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid "
        "            AND a.attname = 'snapshot_id' AND NOT a.attisdropped)"
    ).fetchall()
    parents = {str(r[0]): {p.removeprefix("riido.") for p in r[2]} for r in rows}
    columns = {str(r[0]): list(r[1]) for r in rows}
    ordered: list[str] = []
    while len(ordered) < len(parents):
        ready = sorted(t for t, ps in parents.items() if t not in ordered and ps <= set(ordered))
        ordered.extend(ready or sorted(set(parents) - set(ordered)))
    return [(t, columns[t]) for t in ordered]


def _copy(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Copy every row of the snapshot, table by table, with COPY (inside target's
    transaction): first the texts its documents reference that the target lacks
    (shared there like any load's), then its own rows."""
    copy_texts(source, target, snapshot_id)
    same_major = source.info.server_version // 10000 == target.info.server_version // 10000
    fmt = sql.SQL("(FORMAT binary)" if same_major else "")
    for table, cols in _content_tables(target):
        names = sql.SQL(", ").join(map(sql.Identifier, cols))
        out = sql.SQL("COPY (SELECT {} FROM riido.{} WHERE snapshot_id = {}) TO STDOUT {}").format(
            names, sql.Identifier(table), sql.Literal(snapshot_id), fmt
        )
        into = sql.SQL("COPY riido.{} ({}) FROM STDIN {}").format(sql.Identifier(table), names, fmt)
        with source.cursor().copy(out) as reader, target.cursor().copy(into) as writer:
            for block in reader:
                writer.write(block)


def _digest(conn: Conn, snap: local.Snapshot) -> str | None:
    """The copy's content digest, or None when one of its texts does not hash to its
    key (the digest covers the keys; this covers the texts)."""
    digest, bad = stored_digest(conn, snap.snapshot_id, snap.text_config)
    return digest if bad == 0 else None


@translated(commits="moving a snapshot")
def move_snapshot(router: Router, snapshot_id: str, shard: str) -> str | None:
    """Move a ready snapshot to ``shard``: copy it there in one transaction, check the
    copy's content digest, flip the placement in one coordinator transaction, then
    remove the old copy. Returns the shard it came from (None: the coordinator).

    Readers find the old copy until the flip and the new one after it
    (:meth:`Router.run` reads again from the new owner if the old copy went away
    between finding and reading it): never none, never a mix.
    """
    check_snapshot_id(snapshot_id)
    coordinator = router.coordinator
    if shard not in shard_names(coordinator):
        raise ShardNotFound(f"no shard {shard!r}")
    came_from = router.shard_of(snapshot_id)
    if came_from == shard:
        raise InvalidInput(f"snapshot {snapshot_id!r} is already on shard {shard!r}")
    source, target = router.connection(came_from), router.connection(shard)
    for conn, where in ((coordinator, "the coordinator"), (source, "the source"), (target, shard)):
        require_writable(conn, where)
    with local.snapshot_lock(source, snapshot_id):
        snap = local.get_snapshot(source, snapshot_id)
        with local.snapshot_lock(target, snapshot_id), target.transaction():
            with local.load_timeout(target):
                # a copy left by an interrupted move is not placed there: replace it
                local.delete_content(target, snapshot_id)
                target.execute("DELETE FROM riido.snapshots WHERE snapshot_id = %s", (snapshot_id,))
                _copy(source, target, snapshot_id)
                if _digest(target, snap) != snap.content_digest:
                    raise InvalidInput(
                        f"the copy of {snapshot_id!r} on shard {shard!r} does not match its "
                        "content digest; nothing was moved"
                    )
        coordinator.execute(
            "INSERT INTO riido.placements (snapshot_id, shard) VALUES (%s, %s) "
            "ON CONFLICT (snapshot_id) DO UPDATE SET shard = excluded.shard",
            (snapshot_id, shard),
        )
        local.drop_snapshot(source, snapshot_id)
    return came_from
