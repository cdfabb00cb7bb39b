"""The ``riido-pg`` command line (:func:`main`); the library never imports it.

Importing this package costs nothing: :func:`main` imports the commands (typer, rich,
psycopg: most of a second on a slow machine), so a ^C during those imports is the
same ``error: interrupted`` line and exit 130 as a ^C during a command
(:data:`riido_pg.cli.errors.SIGNALS`), never a traceback.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from riido_pg.cli.main import app

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``riido-pg`` script and ``python -m riido_pg``."""
    try:
        from riido_pg.cli.main import main as run

        run(argv)  # it reports a ^C itself once inside; this covers the call's first steps
    except KeyboardInterrupt:
        # nothing has started that needs cleaning up; os._exit, because the
        # interpreter may otherwise still end by the signal (exit -2) after a ^C
        # that came during an import
        sys.stderr.write("error: interrupted\n")
        sys.stderr.flush()
        os._exit(130)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name != "app":
            raise AttributeError(f"module 'riido_pg.cli' has no attribute {name!r}")
        from riido_pg.cli.main import app

        return app
