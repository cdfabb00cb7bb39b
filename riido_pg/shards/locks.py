"""The coordinator's locks on shards, and steps that a signal must not split.

Every load or move that places a snapshot on a shard holds that shard's lock shared
on the coordinator, from its placement until it ends; ``shards remove`` takes it
exclusively, so a shard is never removed under running work (README "More than one
server"). Both fail at once instead of waiting. The locks are session advisory locks
(released when the block ends or the session dies), in a namespace of their own.
"""

from __future__ import annotations

import hashlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from riido_pg.errors import ShardInUse
from riido_pg.server.connect import Conn
from riido_pg.server.settle import releasing

__all__ = ["shard_exclusive", "shard_shared", "signals_deferred"]

_NAMESPACE = 0x52494953  # "RIIS": shard locks, apart from snapshot and text locks


def _key(shard: str) -> tuple[int, int]:
    digest = hashlib.blake2b(shard.encode(), digest_size=4).digest()
    return _NAMESPACE, int.from_bytes(digest, "big") & 0x7FFFFFFF


@contextmanager
def shard_shared(coordinator: Conn, shard: str) -> Iterator[None]:
    """Hold ``shard``'s lock shared for the block (a load or move placing a snapshot
    there), or raise ShardInUse at once while ``shards remove`` holds it."""
    key = _key(shard)
    row = coordinator.execute("SELECT pg_try_advisory_lock_shared(%s, %s)", key).fetchone()
    if not (row and row[0]):
        raise ShardInUse(f"shard {shard!r} is being removed; try again, or choose another shard")
    with releasing(coordinator, "SELECT pg_advisory_unlock_shared(%s, %s)", key):
        yield


@contextmanager
def shard_exclusive(coordinator: Conn, shard: str) -> Iterator[bool]:
    """Try to hold ``shard``'s lock exclusively for the block; yields whether it got
    it (False: a load or move through this coordinator is running on the shard)."""
    key = _key(shard)
    row = coordinator.execute("SELECT pg_try_advisory_lock(%s, %s)", key).fetchone()
    if not (row and row[0]):
        yield False
        return
    with releasing(coordinator, "SELECT pg_advisory_unlock(%s, %s)", key):
        yield True


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the block (a few statements that must run
    together, e.g. a move's placement flip and the marking of its old copy), then
    deliver what arrived to the handlers that were there. Only the main thread gets
    signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    saved = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if handler is not None:  # None: installed outside Python, left alone
            saved[signum] = handler
            signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        if caught:
            signal.raise_signal(caught[0])
