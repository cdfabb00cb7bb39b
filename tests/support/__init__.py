"""Helpers of the test suite (``tests/conftest.py`` holds only its fixtures and hooks).

- :mod:`support.database`: throw-away databases (also used by ``bench/common.py``),
  cloned from one migrated template per session; :class:`~support.database.Database`
  and the schema's tables.
- :mod:`support.cli`: running ``riido-pg`` in this process (:func:`~support.cli.run_cli`)
  or as a real process (:func:`~support.cli.run_cli_process`, :func:`~support.cli.spawn`,
  and :func:`~support.cli.run_on_terminal` with stdout or stderr on a terminal).
- :mod:`support.sessions`: what other sessions do meanwhile (a table locked, readers,
  a login role) and waiting for a state of the server (:func:`~support.sessions.wait_for`).
- :mod:`support.corpus`: corpora (standard-library functions, BEIR directories, JSON Lines).
- :mod:`support.clusters`: throw-away PostgreSQL clusters and standbys.
- :mod:`support.shards`: a coordinator whose shards are databases of the test server,
  and CLI processes held at a lock.
- :mod:`support.extract_golden`: the extraction fixtures and their golden output.
- :mod:`support.gitrepos`: small git repositories with fixed names and dates.
- :mod:`support.toy_policy`: a policy module of the tests' own (``identifier_bm25_max``),
  registered by tests/test_policy_module.py to show what adding a policy takes.

Test modules import from here and never from each other or from ``conftest``. The
package is importable because ``tests/`` is on ``sys.path`` (pytest's ``pythonpath``
option; ``bench/`` appends it itself).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPO"]

#: The repository's root directory.
REPO = Path(__file__).resolve().parent.parent.parent
