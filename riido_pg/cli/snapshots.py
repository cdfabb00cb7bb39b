"""``snapshots list`` and ``snapshots drop``."""

from __future__ import annotations

from typing import Annotated

import typer

from riido_pg.cli.context import DebugOption, DsnOption, Format, connect, emit_json, settings

__all__ = ["app"]

app = typer.Typer(help="List or drop stored snapshots.", no_args_is_help=True)


@app.command("list")
def snapshots_list(
    ctx: typer.Context,
    fmt: Annotated[Format, typer.Option("--format", help="table or json.")] = Format.table,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """List snapshots: id, documents, text config, state, created."""
    from riido_pg.storage import list_snapshots

    settings(ctx, dsn, debug)
    with connect(ctx) as conn:
        snaps = list_snapshots(conn)
    if fmt is Format.json:
        emit_json(
            [
                {
                    "id": s.snapshot_id,
                    "documents": s.documents,
                    "text_config": s.text_config,
                    "state": s.state,
                    "created": s.created_at.isoformat(),
                }
                for s in snaps
            ]
        )
        return
    from riido_pg.cli.tables import print_snapshots

    print_snapshots(snaps)


@app.command("drop")
def snapshots_drop(
    ctx: typer.Context,
    snapshot_id: Annotated[str, typer.Argument(metavar="SNAPSHOT_ID", help="Snapshot to remove.")],
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Remove a snapshot."""
    from riido_pg.storage import drop_snapshot

    settings(ctx, dsn, debug)
    with connect(ctx) as conn:
        drop_snapshot(conn, snapshot_id)
    typer.echo(f"dropped snapshot {snapshot_id!r}")
