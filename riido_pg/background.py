"""Importing modules on a second thread while this one waits on the server.

An evaluation spends its first few tenths of a second in statements (the corpus's
check, its questions, their lexemes, the postings), during which this process only
waits, and only then needs ``scipy.sparse`` (about 0.1 s of CPU to import: scipy
1.17's array-API layer imports most of numpy's lazily loaded submodules) and, on the
command line, ``rich`` for its table. :func:`import_in_background` imports them then.

The code using such a module still imports it where it uses it: an import of a
module another thread is importing waits for that import to finish, so what runs is
the same whether the thread has finished, is half-way, or failed (the import is then
tried again there and raises there). The thread is not a daemon: a process ending
early waits for it (a tenth of a second at most) instead of stopping it inside an
import.
"""

from __future__ import annotations

import threading
from importlib import import_module

__all__ = ["import_in_background"]


def import_in_background(*modules: str) -> threading.Thread:
    """Start importing ``modules`` in order on a new thread; return it (started)."""

    def run() -> None:
        for name in modules:
            try:
                import_module(name)
            except Exception:  # raised again where the module is used
                continue

    thread = threading.Thread(target=run, name="riido-imports")
    thread.start()
    return thread
