"""``snapshots list``, ``snapshots drop`` and ``snapshots move``."""

from __future__ import annotations

from typing import Annotated

import typer

from riido_pg.cli.context import (
    DebugOption,
    DsnOption,
    Format,
    ListFormatOption,
    emit_json,
    note,
    routed,
    settings,
)

__all__ = ["app"]

app = typer.Typer(help="List, drop or move stored snapshots.", no_args_is_help=True)

SnapshotArg = Annotated[str, typer.Argument(metavar="SNAPSHOT_ID", help="Snapshot id.")]


@app.command("list")
def snapshots_list(
    ctx: typer.Context,
    fmt: ListFormatOption = Format.table,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """List snapshots: id, documents, text config, state, created (and shard)."""
    from riido_pg.shards import list_snapshots

    settings(ctx, dsn, debug)
    with routed(ctx) as router:
        snaps, unreachable = list_snapshots(router)
    if fmt is Format.json:
        emit_json(
            [
                {
                    "id": p.snapshot.snapshot_id,
                    "documents": p.snapshot.documents,
                    "text_config": p.snapshot.text_config,
                    "state": p.snapshot.state,
                    "created": p.snapshot.created_at.isoformat(),
                    "shard": p.shard,
                }
                for p in snaps
            ]
        )
    else:
        from riido_pg.cli.tables import print_snapshots

        print_snapshots(snaps)
    if unreachable:  # the others are listed; the first unreachable shard fails the run
        raise unreachable[0]


@app.command("drop")
def snapshots_drop(
    ctx: typer.Context,
    snapshot_id: SnapshotArg,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Remove a snapshot (from the shard holding it)."""
    from riido_pg.shards import drop_snapshot

    settings(ctx, dsn, debug)
    with routed(ctx) as router:
        drop_snapshot(router, snapshot_id)
    typer.echo(f"dropped snapshot {snapshot_id!r}")


@app.command("move")
def snapshots_move(
    ctx: typer.Context,
    snapshot_id: SnapshotArg,
    shard: Annotated[str, typer.Argument(metavar="SHARD", help="The shard to move it to.")],
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Overwrite a ready snapshot of that id the shard already holds (not placed "
            "there: loaded on it directly, or by another coordinator).",
        ),
    ] = False,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Move a snapshot to another shard: copy, verify, switch readers, remove the old copy."""
    from riido_pg.shards import move_snapshot

    settings(ctx, dsn, debug)
    with routed(ctx) as router:
        moved = move_snapshot(router, snapshot_id, shard, replace=replace)
    where = f"shard {moved.came_from!r}" if moved.came_from else "the coordinator"
    typer.echo(f"moved snapshot {snapshot_id!r} from {where} to shard {shard!r}")
    if moved.note:
        note(moved.note)
