"""``snapshots list``, ``snapshots drop`` and ``snapshots move``."""

from __future__ import annotations

from typing import Annotated

import typer

from riido_pg.cli.options import Format, ListFormatOpt, SnapshotArg
from riido_pg.cli.output import emit_json, note
from riido_pg.cli.settings import database, settings

__all__ = ["app"]

app = typer.Typer(help="List, drop or move stored snapshots.", no_args_is_help=True)


@app.command("list", short_help="List snapshots: documents, state, base, shard.")
def snapshots_list(ctx: typer.Context, fmt: ListFormatOpt = Format.table) -> None:
    """List snapshots: id, documents, text config, state, created (and shard)."""
    with database(ctx) as db:
        listing = db.snapshots()
    if fmt is Format.json:
        emit_json(listing.to_dicts())
    else:
        from riido_pg.cli.tables import print_snapshots

        print_snapshots(listing.snapshots)
    if listing.unreachable:  # the others are listed; the first unreachable shard fails the run
        raise listing.unreachable[0]


@app.command("drop")
def snapshots_drop(ctx: typer.Context, snapshot_id: SnapshotArg) -> None:
    """Remove a snapshot (from the shard holding it)."""
    with database(ctx) as db:
        db.drop(snapshot_id)
        settings(ctx).finish(f"snapshot {snapshot_id!r} is dropped")
    typer.echo(f"dropped snapshot {snapshot_id!r}")


@app.command("move", short_help="Move a snapshot to another shard.")
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
) -> None:
    """Move a snapshot to another shard: copy, verify, switch readers, remove the old copy."""
    with database(ctx) as db:
        moved = db.move(snapshot_id, shard, replace=replace)
        settings(ctx).finish(f"snapshot {snapshot_id!r} is on shard {shard!r}")
    where = f"shard {moved.came_from!r}" if moved.came_from else "the coordinator"
    typer.echo(f"moved snapshot {snapshot_id!r} from {where} to shard {shard!r}")
    if moved.note:
        note(moved.note)
