"""Files shipped with the package: the ranking SQL (``riido_pg/sql``) and the alembic
migrations (``riido_pg/migrations``), found through :mod:`importlib.resources` alone.

They are package data, so an editable install, a wheel and an sdist see them at the same
place; the checkout's top-level ``sql`` and ``migrations`` are links to these
directories, for readers.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["migrations_dir", "sql_template", "sql_text"]


def migrations_dir() -> Path:
    """The alembic script directory (alembic wants a path on disk)."""
    return Path(str(resources.files("riido_pg").joinpath("migrations")))


@cache
def sql_text(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return resources.files("riido_pg").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


@cache
def sql_template(name: str) -> str:
    """``sql/<name>.sql`` as a template for :meth:`psycopg.sql.SQL.format`: its
    whole-line comments that name a placeholder are left out (a fragment spanning
    lines must never land inside a comment line). The others stay, so a statement's
    first line still names its file in ``pg_stat_activity``."""
    lines = sql_text(name).splitlines()
    kept = (ln for ln in lines if not (ln.lstrip().startswith("--") and "{" in ln))
    return "\n".join(kept) + "\n"
