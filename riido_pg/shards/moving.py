"""``snapshots move``: copying a snapshot to another shard, switching its readers, and
removing the old copy (README "More than one server").

The copy is written in one transaction on the new shard, as a ``loading`` row, so a
copy an interrupted move leaves is never taken for a snapshot; the next move there
(or load, or drop) replaces it. Then three statements run with SIGINT and SIGTERM held
back (:func:`~riido_pg.shards.locks.signals_deferred`): the copy becomes ``ready``,
the placement flips to it, and the old copy becomes ``loading``. From the flip on the
snapshot has moved: an interrupt while the old copy is dropped ends the move with a
note, and what is left of the old copy is removed by the next load, move or drop on
its server (:func:`~riido_pg.shards.routing.collect_strays`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import psycopg

from riido_pg.documents import check_snapshot_id
from riido_pg.errors import (
    DatabaseUnavailable,
    Hint,
    InvalidInput,
    RiidoError,
    ShardNotFound,
    ShardUnavailable,
    SnapshotExists,
)
from riido_pg.server.connect import Conn
from riido_pg.server.errors import translate, translated
from riido_pg.shards.catalog import require_writable, shard_names
from riido_pg.shards.locks import shard_shared, signals_deferred
from riido_pg.shards.routing import Router, collect_strays
from riido_pg.storage import snapshots as local
from riido_pg.storage.copying import copy_snapshot, delete_snapshot_rows
from riido_pg.storage.texts import stored_digest
from riido_pg.storage.timeouts import load_timeout

__all__ = ["MovedSnapshot", "move_snapshot"]


@dataclass(frozen=True, slots=True)
class MovedSnapshot:
    """A finished move: where the snapshot came from (None: the coordinator), where it
    is now, and, when its old copy could not be removed, a note saying why and what
    removes it (None: it was removed)."""

    snapshot_id: str
    came_from: str | None
    shard: str
    note: str | None = None


def _copy(source: Conn, target: Conn, snapshot_id: str) -> None:
    """Copy what the snapshot is made of (inside target's transaction): the one step
    that moves content (:func:`riido_pg.storage.copying.copy_snapshot`: the texts and
    segments its path needs that the target lacks, then its own rows)."""
    copy_snapshot(source, target, snapshot_id)


def _digest(conn: Conn, snap: local.Snapshot) -> str | None:
    """The copy's content digest, or None when one of its texts does not hash to its
    key (the digest covers the keys; this covers the texts)."""
    digest, bad = stored_digest(conn, snap.snapshot_id, snap.text_config)
    return digest if bad == 0 else None


def _set_state(conn: Conn, snapshot_id: str, state: str) -> None:
    conn.execute(
        "UPDATE riido.snapshots SET state = %s WHERE snapshot_id = %s", (state, snapshot_id)
    )


def _copy_unready(
    source: Conn, target: Conn, snap: local.Snapshot, shard: str, replace: bool
) -> None:
    """Copy the snapshot into ``target`` as a ``loading`` row and check it, in one
    transaction; a ready snapshot of that id there is replaced only with ``replace``."""
    snapshot_id = snap.snapshot_id
    with target.transaction(), load_timeout(target):
        there = local.find_snapshot(target, snapshot_id)
        if there is not None and there.state == "ready" and not replace:
            raise SnapshotExists(
                f"shard {shard!r} already holds a ready snapshot {snapshot_id!r} that is not "
                "placed there (loaded on that shard directly, or by another coordinator)",
                Hint(
                    "move with --replace to overwrite it, or drop it on that shard first",
                    "move with replace=True to overwrite it, or drop it on that shard first",
                ),
            )
        delete_snapshot_rows(target, snapshot_id)  # a copy an interrupted move left
        _copy(source, target, snapshot_id)
        _set_state(target, snapshot_id, "loading")
        if _digest(target, snap) != snap.content_digest:
            raise InvalidInput(
                f"the copy of {snapshot_id!r} on shard {shard!r} does not match its "
                "content digest; nothing was moved"
            )


@contextmanager
def _naming_the_server(conns: dict[str | None, Conn]) -> Iterator[None]:
    """A lost connection to a shard during the block is an error naming that shard."""
    try:
        yield
    except (psycopg.OperationalError, DatabaseUnavailable) as exc:
        if isinstance(exc, RiidoError) and type(exc) is not DatabaseUnavailable:
            raise
        lost = [name for name, c in conns.items() if name is not None and (c.closed or c.broken)]
        if not lost:
            raise
        reason = exc if isinstance(exc, RiidoError) else translate(exc)
        raise ShardUnavailable(
            f"shard {lost[0]!r} is unavailable: {reason.message}", reason.hint
        ) from exc


def _drop_old_copy(source: Conn, snapshot_id: str) -> str | None:
    """Drop the moved snapshot's old copy (marked ``loading``); why it is still there
    when that was cut short, else None."""
    try:
        local.drop_snapshot(source, snapshot_id)
        return None
    except KeyboardInterrupt:  # also SIGTERM in the CLI: the move itself is done
        why = "interrupted"
    except RiidoError as exc:
        why = exc.message
    try:
        if local.find_snapshot(source, snapshot_id) is None:
            return None  # only the collection of its texts was cut short
    except (RiidoError, psycopg.Error):
        pass
    return why


def _where(server: str | None) -> str:
    return f"shard {server!r}" if server else "the coordinator"


def _cut_short(came_from: str | None, why: str) -> str:
    """The note of a move whose old copy (marked ``loading``) is still there."""
    where = _where(came_from)
    return (
        f"removing the old copy on {where} was cut short ({why}); nothing lists or reads "
        f"it, and the next load, move or drop on {where} removes it"
    )


def _switch(router: Router, snapshot_id: str, came_from: str | None, shard: str) -> str | None:
    """Make the new copy ready, flip the placement to it and mark the old copy for
    removal (``loading``), with SIGINT and SIGTERM held back. Once the placement has
    flipped the move is done: returns the note for the user when the old copy must be
    left (an interrupt arrived, or the old server failed), else None."""
    flipped = False
    try:
        with signals_deferred():
            _set_state(router.connection(shard), snapshot_id, "ready")
            router.coordinator.execute(
                "INSERT INTO riido.placements (snapshot_id, shard) VALUES (%s, %s) "
                "ON CONFLICT (snapshot_id) DO UPDATE SET shard = excluded.shard",
                (snapshot_id, shard),
            )
            flipped = True
            _set_state(router.connection(came_from), snapshot_id, "loading")
    except KeyboardInterrupt:
        if not flipped:
            raise
        return _cut_short(came_from, "interrupted")
    except (RiidoError, psycopg.Error) as exc:
        if not flipped:
            raise
        return (
            f"the old copy on {_where(came_from)} could not be removed ({exc}); nothing "
            "lists or reads it: drop it on that server"
        )
    return None


@translated(commits="moving a snapshot")
def move_snapshot(
    router: Router, snapshot_id: str, shard: str, *, replace: bool = False
) -> MovedSnapshot:
    """Move a ready snapshot to ``shard``: copy it there in one transaction, check the
    copy's content digest, flip the placement, then remove the old copy.

    Readers find the old copy until the flip and the new one after it
    (:meth:`Router.run` reads again from the new owner if the old copy went away
    between finding and reading it): never none, never a mix. A ready snapshot of that
    id already on ``shard`` (not placed there) is SnapshotExists unless ``replace``.
    """
    check_snapshot_id(snapshot_id)
    coordinator = router.coordinator
    require_writable(coordinator, "the coordinator")
    with local.snapshot_lock(coordinator, snapshot_id), ExitStack() as held:
        if shard not in shard_names(coordinator):
            raise ShardNotFound(f"no shard {shard!r}")
        came_from = router.shard_of(snapshot_id)
        if came_from == shard:
            raise InvalidInput(f"snapshot {snapshot_id!r} is already on shard {shard!r}")
        for name in {shard, came_from} - {None}:
            assert name is not None
            held.enter_context(shard_shared(coordinator, name))
        if shard not in shard_names(coordinator):  # removed meanwhile
            raise ShardNotFound(f"no shard {shard!r}")
        source, target = router.connection(came_from), router.connection(shard)
        with _naming_the_server({came_from: source, shard: target}):
            require_writable(source, f"shard {came_from!r}" if came_from else "the coordinator")
            require_writable(target, f"shard {shard!r}")
            collect_strays(router, shard)
            with local.snapshot_lock(source, snapshot_id):
                snap = local.get_snapshot(source, snapshot_id)
                with local.snapshot_lock(target, snapshot_id):
                    _copy_unready(source, target, snap, shard, replace)
                    note = _switch(router, snapshot_id, came_from, shard)
        if note is None:
            why = _drop_old_copy(source, snapshot_id)
            note = _cut_short(came_from, why) if why else None
        if note is None:
            collect_strays(router, came_from)
    return MovedSnapshot(snapshot_id, came_from, shard, note)
