"""More than one server (README "More than one server").

A coordinator is any riido-pg database whose ``riido.shards`` catalog names other
riido-pg databases (shards); ``riido.placements`` says which shard holds a snapshot.
A snapshot lives wholly on one server, so every command finds the snapshot's owner
(:class:`Router`) and runs the single-server code there, on a direct connection built
from the shard's ``postgres_fdw`` foreign server and user mapping: the ranking runs on
the owning shard's CPU.
"""

from riido_pg.shards.adding import add_shard
from riido_pg.shards.catalog import (
    ShardInfo,
    list_shards,
    remove_shard,
    require_writable,
    upgrade_shards,
)
from riido_pg.shards.moving import MovedSnapshot, move_snapshot
from riido_pg.shards.routing import PlacedSnapshot, Router, drop_snapshot, list_snapshots

__all__ = [
    "MovedSnapshot",
    "PlacedSnapshot",
    "Router",
    "ShardInfo",
    "add_shard",
    "drop_snapshot",
    "list_shards",
    "list_snapshots",
    "move_snapshot",
    "remove_shard",
    "require_writable",
    "upgrade_shards",
]
