"""The ``riido-pg`` command line (:func:`main`); the library never imports it."""

from riido_pg.cli.main import app, main

__all__ = ["app", "main"]
