"""Tree-sitter grammars, loaded from the per-language wheels on first use.

Each grammar package exposes a function returning a pointer to its compiled
language; nothing is downloaded at run time. ``.tsx`` files use the TSX
grammar, every other TypeScript file the plain TypeScript one (the two differ
on ``<T>x`` casts versus JSX).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from functools import cache
from typing import cast

from tree_sitter import Language, Parser

from riido_pg.extract.languages import LANGUAGES, Grammar
from riido_pg.extract.rules import Rules

__all__ = ["grammar_distributions", "grammar_key", "language", "parser", "rules"]

#: Grammar key -> the grammar and the rules of its language.
_BY_KEY: dict[str, tuple[Grammar, Rules]] = {
    g.key: (g, lang.rules) for lang in LANGUAGES.values() for g in lang.grammars
}


def grammar_distributions() -> list[str]:
    """The names of the grammar packages, as installed (``tree-sitter-python``, …)."""
    return sorted({g.module.replace("_", "-") for g, _ in _BY_KEY.values()})


def grammar_key(language_name: str, file_name: str) -> str:
    """The grammar for a file of ``language_name``: its name, or ``tsx``."""
    return LANGUAGES[language_name].grammar_for(file_name).key


def rules(key: str) -> Rules:
    """The naming rules of the language grammar ``key`` parses."""
    return _BY_KEY[key][1]


@cache
def language(key: str) -> Language:
    """The compiled tree-sitter language for a grammar key."""
    grammar = _BY_KEY[key][0]
    module = importlib.import_module(grammar.module)
    pointer = cast(Callable[[], object], getattr(module, grammar.function))()
    return Language(pointer)


_local = threading.local()


def parser(key: str) -> Parser:
    """A parser for a grammar key: one per key and thread (parsers are not thread-safe)."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(key)
    if found is None:
        found = parsers[key] = Parser(language(key))
    return found
