"""``db upgrade|downgrade|current|grant-reader|stop``: the schema and the server."""

from __future__ import annotations

from typing import Annotated

import typer

from riido_pg.cli.settings import connect, settings

__all__ = ["app"]

app = typer.Typer(help="Schema migrations and the embedded server.", no_args_is_help=True)


def _dsn(ctx: typer.Context) -> str:
    from riido_pg.db import resolve_dsn

    return resolve_dsn(settings(ctx).dsn)[0]


@app.command("upgrade")
def db_upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(metavar="REV", help="Target revision.")] = "head",
) -> None:
    """Migrate the schema up (default: to the newest revision), and every shard's."""
    from riido_pg.server import migrate

    url = _dsn(ctx)
    migrate.upgrade(url, revision)
    at = migrate.current(url)
    typer.echo(f"schema at {at or 'base'}")
    if at is None or at < "0007":  # no shard catalog below 0007
        return
    from riido_pg.shards import upgrade_shards

    with connect(ctx, migrate=False) as conn:
        for name, rev in upgrade_shards(conn, revision):
            typer.echo(f"shard {name!r}: schema at {rev or 'base'}")


@app.command("downgrade")
def db_downgrade(
    ctx: typer.Context,
    revision: Annotated[
        str, typer.Argument(metavar="REV", help="Target revision; 'base' removes everything.")
    ],
) -> None:
    """Migrate the schema down to REV."""
    from riido_pg.server import migrate

    url = _dsn(ctx)
    migrate.downgrade(url, revision)
    typer.echo(f"schema at {migrate.current(url) or 'base'}")


@app.command("current")
def db_current(ctx: typer.Context) -> None:
    """Print the schema revision of the database ('base' when there is none)."""
    from riido_pg.server import migrate

    typer.echo(migrate.current(_dsn(ctx)) or "base")


@app.command("grant-reader")
def db_grant_reader(
    ctx: typer.Context,
    role: Annotated[
        str, typer.Argument(metavar="ROLE", help="An existing role to make a read-only reader.")
    ],
) -> None:
    """Let ROLE query snapshots and nothing else (no load, drop, hints or DDL)."""
    from riido_pg.server.privileges import grant_reader

    with connect(ctx) as conn:
        grant_reader(conn, role)
    typer.echo(f"role {role!r} can now query snapshots (read-only)")


@app.command("stop")
def db_stop() -> None:
    """Stop the embedded server (it starts again on the next command)."""
    from riido_pg.server.embedded import stop_embedded

    typer.echo(
        "stopped the embedded server" if stop_embedded() else "the embedded server is not running"
    )
