"""Alembic environment for riido-pg.

Run through ``riido-pg db upgrade|downgrade|current`` (riido_pg.migrate), which hands
over an open SQLAlchemy connection in ``config.attributes["connection"]``.
The version table lives in schema ``riido`` with everything else.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import text

from riido_pg.server.schema import SCHEMA, metadata

config = context.config


def run_migrations_online() -> None:
    connection = config.attributes["connection"]
    connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{SCHEMA}"'))
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table_schema=SCHEMA,
        include_schemas=True,
        include_name=lambda name, type_, parent: name == SCHEMA if type_ == "schema" else True,
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("riido-pg migrations run online only: use `riido-pg db upgrade`")
run_migrations_online()
