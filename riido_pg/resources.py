"""Files shipped with the package: the ranking SQL and the alembic migrations.

In a built wheel they live inside the package (``riido_pg/sql``,
``riido_pg/migrations``); in a source checkout they are the top-level ``sql/`` and
``migrations/`` directories.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["migrations_dir", "sql_template", "sql_text"]

_CHECKOUT = Path(__file__).resolve().parent.parent


def _locate(name: str) -> Path:
    packaged = Path(str(resources.files("riido_pg"))) / name
    if packaged.is_dir():
        return packaged
    checkout = _CHECKOUT / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"riido-pg is installed without its {name}/ directory")


def migrations_dir() -> Path:
    return _locate("migrations")


@cache
def sql_text(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return (_locate("sql") / f"{name}.sql").read_text(encoding="utf-8")


@cache
def sql_template(name: str) -> str:
    """``sql/<name>.sql`` as a template for :meth:`psycopg.sql.SQL.format`: its
    whole-line comments that name a placeholder are left out (a fragment spanning
    lines must never land inside a comment line). The others stay, so a statement's
    first line still names its file in ``pg_stat_activity``."""
    lines = sql_text(name).splitlines()
    kept = (ln for ln in lines if not (ln.lstrip().startswith("--") and "{" in ln))
    return "\n".join(kept) + "\n"
