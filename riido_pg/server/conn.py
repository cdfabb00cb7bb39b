"""A connection as riido-pg uses it, and opening one to a given URL.

The lowest rung of :mod:`riido_pg.server`: :mod:`~riido_pg.server.migrate` dials the
server it migrates with :func:`dial`, and :mod:`~riido_pg.server.connect`, which
chooses the server (starting the embedded one) and checks its schema, builds on both.
No message about a connection string shows its password.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import psycopg

from riido_pg.errors import DatabaseUnavailable, InvalidDsn
from riido_pg.redact import NOT_UTF8, redact_dsn, unparsed_reason
from riido_pg.server.errors import first_line

__all__ = ["Conn", "dial"]

#: A connection as riido-pg uses it (the row type is whatever the caller's factory gives).
Conn: TypeAlias = psycopg.Connection[Any]


def dial(url: str, **kwargs: Any) -> Conn:
    """``psycopg.connect(url, **kwargs)``, its failures as :class:`InvalidDsn` (the
    string does not parse: nothing of it is shown; or it has a malformed value) or
    :class:`DatabaseUnavailable`, each with the password masked."""
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.ProgrammingError as exc:  # the DSN does not parse
        raise InvalidDsn(f"invalid DSN: {unparsed_reason(first_line(exc))}") from exc
    except UnicodeDecodeError:  # psycopg decodes percent-encoded bytes as UTF-8
        raise InvalidDsn(f"invalid DSN: {NOT_UTF8}") from None
    except psycopg.OperationalError as exc:
        message = redact_dsn(first_line(exc), url)
        # libpq refuses a malformed option value before any network work
        if message.startswith("connection is bad: invalid"):
            reason = message.removeprefix("connection is bad: ")
            raise InvalidDsn(f"invalid DSN: {reason}") from exc
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL: {message}") from exc
