"""The library's façade (:class:`Database`), what its methods return, and everything
else the command line renders or calls.

The command line (:mod:`riido_pg.cli`) imports from :mod:`riido_pg` and from here
only, never from the packages underneath (``tests/test_cli_imports.py`` holds it to
that): what it needs beyond the façade's methods -- the policy registry, the limits
it checks options against, the records it prints, the corpus builders, the schema
migrations, the output helpers -- is named here, once, with its home. Those names
are imported when first used (PEP 562, as :mod:`riido_pg` does), so a command
imports only what it runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from riido_pg.api.database import Database
from riido_pg.api.results import Evaluated, Listing, Loaded

if TYPE_CHECKING:
    from riido_pg.agents import serve as serve_agents
    from riido_pg.background import import_in_background
    from riido_pg.config import DSN as DSN_SETTING
    from riido_pg.corpora.docproxy import build_docproxy
    from riido_pg.corpora.history import HistoryOptions
    from riido_pg.corpora.history import build as build_history_corpus
    from riido_pg.documents import MAX_LIMIT, read_request
    from riido_pg.evaluation import Evaluation
    from riido_pg.extract import ExtractStats, iter_functions, write_jsonl
    from riido_pg.files import STDOUT, check_output, output_file, write_output
    from riido_pg.quoting import visible
    from riido_pg.ranking import Ranking
    from riido_pg.ranking.policies import (
        BM25,
        evaluated_policies,
        model_rankings,
        policies,
        select_policy,
    )
    from riido_pg.ranking.rank import NO_WORDS
    from riido_pg.server.embedded import stop as stop_embedded
    from riido_pg.server.errors import translate as translate_database_error
    from riido_pg.server.migrate import current as schema_revision
    from riido_pg.server.migrate import data_loss as schema_data_loss
    from riido_pg.server.migrate import downgrade as downgrade_schema
    from riido_pg.server.migrate import target as schema_target
    from riido_pg.server.migrate import upgrade as upgrade_schema
    from riido_pg.shards import PlacedSnapshot, ShardInfo
    from riido_pg.sources import Table, TreeOptions, read_hints
    from riido_pg.storage import DEFAULT_TEXT_CONFIG
    from riido_pg.words import count

#: Each lazily imported name: its module and its name there.
_HOMES: dict[str, tuple[str, str]] = {
    "BM25": ("riido_pg.ranking.policies", "BM25"),
    "DEFAULT_TEXT_CONFIG": ("riido_pg.storage", "DEFAULT_TEXT_CONFIG"),
    "DSN_SETTING": ("riido_pg.config", "DSN"),
    "Evaluation": ("riido_pg.evaluation", "Evaluation"),
    "ExtractStats": ("riido_pg.extract", "ExtractStats"),
    "HistoryOptions": ("riido_pg.corpora.history", "HistoryOptions"),
    "MAX_LIMIT": ("riido_pg.documents", "MAX_LIMIT"),
    "NO_WORDS": ("riido_pg.ranking.rank", "NO_WORDS"),
    "PlacedSnapshot": ("riido_pg.shards", "PlacedSnapshot"),
    "Ranking": ("riido_pg.ranking", "Ranking"),
    "STDOUT": ("riido_pg.files", "STDOUT"),
    "ShardInfo": ("riido_pg.shards", "ShardInfo"),
    "Table": ("riido_pg.sources", "Table"),
    "TreeOptions": ("riido_pg.sources", "TreeOptions"),
    "build_docproxy": ("riido_pg.corpora.docproxy", "build_docproxy"),
    "build_history_corpus": ("riido_pg.corpora.history", "build"),
    "check_output": ("riido_pg.files", "check_output"),
    "count": ("riido_pg.words", "count"),
    "downgrade_schema": ("riido_pg.server.migrate", "downgrade"),
    "evaluated_policies": ("riido_pg.ranking.policies", "evaluated_policies"),
    "import_in_background": ("riido_pg.background", "import_in_background"),
    "iter_functions": ("riido_pg.extract", "iter_functions"),
    "model_rankings": ("riido_pg.ranking.policies", "model_rankings"),
    "output_file": ("riido_pg.files", "output_file"),
    "read_request": ("riido_pg.documents", "read_request"),
    "policies": ("riido_pg.ranking.policies", "policies"),
    "read_hints": ("riido_pg.sources", "read_hints"),
    "schema_data_loss": ("riido_pg.server.migrate", "data_loss"),
    "schema_revision": ("riido_pg.server.migrate", "current"),
    "schema_target": ("riido_pg.server.migrate", "target"),
    "select_policy": ("riido_pg.ranking.policies", "select_policy"),
    "serve_agents": ("riido_pg.agents", "serve"),
    "stop_embedded": ("riido_pg.server.embedded", "stop"),
    "translate_database_error": ("riido_pg.server.errors", "translate"),
    "upgrade_schema": ("riido_pg.server.migrate", "upgrade"),
    "visible": ("riido_pg.quoting", "visible"),
    "write_jsonl": ("riido_pg.extract", "write_jsonl"),
    "write_output": ("riido_pg.files", "write_output"),
}

__all__ = [
    "BM25",
    "DEFAULT_TEXT_CONFIG",
    "DSN_SETTING",
    "MAX_LIMIT",
    "NO_WORDS",
    "STDOUT",
    "Database",
    "Evaluated",
    "Evaluation",
    "ExtractStats",
    "HistoryOptions",
    "Listing",
    "Loaded",
    "PlacedSnapshot",
    "Ranking",
    "ShardInfo",
    "Table",
    "TreeOptions",
    "build_docproxy",
    "build_history_corpus",
    "check_output",
    "count",
    "downgrade_schema",
    "evaluated_policies",
    "import_in_background",
    "iter_functions",
    "model_rankings",
    "output_file",
    "policies",
    "read_hints",
    "read_request",
    "schema_data_loss",
    "schema_revision",
    "schema_target",
    "select_policy",
    "serve_agents",
    "stop_embedded",
    "translate_database_error",
    "upgrade_schema",
    "visible",
    "write_jsonl",
    "write_output",
]

if not TYPE_CHECKING:  # type checkers see the imports above instead

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'riido_pg.api' has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
