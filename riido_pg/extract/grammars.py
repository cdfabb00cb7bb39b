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

__all__ = ["grammar_distributions", "grammar_key", "language", "parser"]

#: Grammar key -> (module, function returning the language pointer).
_GRAMMARS: dict[str, tuple[str, str]] = {
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "python": ("tree_sitter_python", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
}


def grammar_distributions() -> list[str]:
    """The names of the grammar packages, as installed (``tree-sitter-python``, …)."""
    return sorted({module.replace("_", "-") for module, _ in _GRAMMARS.values()})


def grammar_key(language_name: str, file_name: str) -> str:
    """The grammar for a file of ``language_name``: its name, or ``tsx``."""
    if language_name == "typescript" and file_name.endswith(".tsx"):
        return "tsx"
    return language_name


@cache
def language(key: str) -> Language:
    """The compiled tree-sitter language for a grammar key."""
    module_name, function_name = _GRAMMARS[key]
    module = importlib.import_module(module_name)
    pointer = cast(Callable[[], object], getattr(module, function_name))()
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
