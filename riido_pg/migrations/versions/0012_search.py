"""Search from SQL: ``riido.search(snapshot, query, k, policy)`` (docs/search-from-sql.md).

Installs ``sql/search.sql`` (the splitter, the interleave and the ranking in SQL and
PL/pgSQL) and two things generated here from the Python that runs the upgrade, so
that the SQL splits and ranks as that Python does:

* ``riido.split_chars``: the class of every non-ASCII character the identifier
  splitter treats as part of a word (``riido_pg.splitting``), its lowercase form and
  how it takes part in Python's final-sigma rule, as ranges of code points;
* ``riido.search_settings()``: the policies' constants
  (``riido_pg.ranking.policies``) and the query limits.

A later change to those (or to ``sql/search.sql``) needs a migration that installs
them again: a database upgraded before the change would keep the old ones.
:data:`INSTALLS` records the digest of what this revision installs, and
tests/test_sql_search.py fails when the newest such digest is not the package's
(:func:`digest`); it also compares both implementations.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from __future__ import annotations

import functools
import itertools
import unicodedata

from alembic import op

from riido_pg.server import search_functions
from riido_pg.splitting import _char_class

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


_SIGMA = "\u03a3"
_PLANE_14 = range(0xE0000, 0xF0000)


def _sigma_kind(ch: str) -> str:
    """How ``ch`` takes part in Python's final-sigma rule, read from ``str.lower``
    itself: "i" skipped (case-ignorable), "c" a cased letter, "n" neither."""
    if (ch + _SIGMA).lower()[-1] == "\u03c2":
        return "c"  # a cased character that is not case-ignorable
    if ("\u0391" + ch + _SIGMA).lower()[-1] == "\u03c2":
        return "i"
    return "n"


def _char_row(cp: int) -> tuple[str, str, str] | None:
    """(class, lowercase, sigma kind) of a non-ASCII character, or None for a
    separator. The class is the splitter's own (``riido_pg.splitting``), and "m" for
    a combining mark, which joins a word character before it."""
    ch = chr(cp)
    if not ch.isalnum() and unicodedata.category(ch).startswith("M"):
        cls = "m"
    else:
        cls = _char_class(ch)
        if cls == " ":
            return None
    return cls, ch.lower(), _sigma_kind(ch)


@functools.cache
def _ranges() -> list[tuple[int, int, str, int | None, str | None, str]]:
    """``riido.split_chars`` rows: maximal runs of code points with the same class,
    sigma kind and lowercase offset (or the same explicit lowercase text)."""
    rows: list[tuple[int, int, str, int | None, str | None, str]] = []
    # planes 4 to 13 hold no assigned character and 15 and 16 only private use (no
    # letter, digit or mark) in every Unicode version so far: 0.9 of the code points
    for cp in itertools.chain(range(128, 0xD800), range(0xE000, 0x40000), _PLANE_14):
        found = _char_row(cp)
        if found is None:
            continue
        cls, low, sigma = found
        delta: int | None = ord(low) - cp if len(low) == 1 else None
        text = None if delta is not None else low
        if rows:
            lo, hi, c, d, t, s = rows[-1]
            if hi == cp - 1 and (c, d, t, s) == (cls, delta, text, sigma):
                rows[-1] = (lo, cp, c, d, t, s)
                continue
        rows.append((cp, cp, cls, delta, text, sigma))
    return rows


#: :func:`digest` as of this revision.
INSTALLS = "46df125c243476dd1d8f60af9080a60c1e5620d64f14d1897b08a476139b92b6"
digest = search_functions.digest


def upgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None  # a psycopg connection under alembic's SQLAlchemy one
    conn.execute(
        "CREATE TABLE riido.split_chars (lo integer PRIMARY KEY, hi integer NOT NULL, "
        "cls text NOT NULL, lower_delta integer, lower_text text, sigma text NOT NULL)"
    )
    rows = _ranges()
    conn.execute(
        "INSERT INTO riido.split_chars SELECT * FROM unnest(%s::int[], %s::int[], %s::text[], "
        "%s::int[], %s::text[], %s::text[])",
        [list(col) for col in zip(*rows, strict=True)],
    )
    search_functions.install(conn, again=False)


def downgrade() -> None:
    conn = op.get_bind().connection.driver_connection
    assert conn is not None
    search_functions.drop(conn)
    op.execute("DROP TABLE riido.split_chars")
