"""``shards add|list|remove``: the coordinator's shard catalog."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from riido_pg.cli.context import (
    DebugOption,
    DsnOption,
    Format,
    ListFormatOption,
    connect,
    emit_json,
    settings,
)

__all__ = ["app"]

app = typer.Typer(
    help="Shards: other PostgreSQL databases this one (the coordinator) spreads snapshots over.",
    no_args_is_help=True,
)

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The shard's name.")]


@app.command("add")
def shards_add(
    ctx: typer.Context,
    name: NameArg,
    shard_dsn: Annotated[
        str, typer.Argument(metavar="SHARD_DSN", help="The shard database's PostgreSQL URL.")
    ],
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Register a shard (a postgres_fdw server and user mapping; its schema is migrated)."""
    from riido_pg.shards import add_shard

    settings(ctx, dsn, debug)
    with connect(ctx) as conn:
        add_shard(conn, name, shard_dsn)
    typer.echo(f"added shard {name!r}")


@app.command("list")
def shards_list(
    ctx: typer.Context,
    fmt: ListFormatOption = Format.table,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """List shards: host, database, snapshots, documents, bytes (never credentials)."""
    from riido_pg.shards import list_shards

    settings(ctx, dsn, debug)
    with connect(ctx) as conn:
        shards = list_shards(conn)
    if fmt is Format.json:
        emit_json([asdict(s) for s in shards])
        return
    from riido_pg.cli.tables import print_shards

    print_shards(shards)


@app.command("remove")
def shards_remove(
    ctx: typer.Context, name: NameArg, dsn: DsnOption = None, debug: DebugOption = False
) -> None:
    """Unregister a shard that holds no snapshot."""
    from riido_pg.shards import remove_shard

    settings(ctx, dsn, debug)
    with connect(ctx) as conn:
        remove_shard(conn, name)
    typer.echo(f"removed shard {name!r}")
