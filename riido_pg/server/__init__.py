"""The PostgreSQL server: connecting, the embedded default, migrations, privileges,
and the one place where database errors become :class:`riido_pg.errors.RiidoError`."""
