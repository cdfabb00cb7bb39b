"""Source code to documents: one document per function or method.

``iter_functions(root)`` walks a directory (honouring ``.gitignore`` and
``.ignore``, skipping vendored code, never following symlinks), parses each
file of a supported language with its tree-sitter grammar, and yields one
``Function`` per function, method or named function expression, with id
``PATH:QUALNAME:LINE``. ``write_jsonl`` writes them as JSON Lines that the
loader reads. The rules are documented in the submodules: ``languages``
(extensions), ``ignore`` (what is left out), ``paths`` (test, documentation and
example paths), ``walk`` (order, symlinks), ``reading`` (binary, size,
encoding), ``rules`` (qualified names), ``functions`` (text, lines, ids, the
nesting bound) and ``syntax`` (the one walk down each tree).

Importing this package does not load tree-sitter; the first extraction does. Its names
are imported when first used (PEP 562, as :mod:`riido_pg` does): a module that needs
``riido_pg.extract.paths`` alone (the ranking's field weights, on every command's
start-up) does not import the walker, the rules and the readers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from riido_pg.extract.api import DEFAULT_MAX_FILE_BYTES, MAX_ID_BYTES, iter_functions
    from riido_pg.extract.cache import FileCache
    from riido_pg.extract.documents import tree_documents
    from riido_pg.extract.languages import LANGUAGES
    from riido_pg.extract.model import Function, FunctionMetadata, write_jsonl
    from riido_pg.extract.paths import is_doc_or_example_path, is_test_path
    from riido_pg.extract.stats import ExtractStats

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "LANGUAGES",
    "MAX_ID_BYTES",
    "ExtractStats",
    "FileCache",
    "Function",
    "FunctionMetadata",
    "is_doc_or_example_path",
    "is_test_path",
    "iter_functions",
    "tree_documents",
    "write_jsonl",
]

#: The module each public name comes from.
_HOMES = {
    "DEFAULT_MAX_FILE_BYTES": "riido_pg.extract.api",
    "LANGUAGES": "riido_pg.extract.languages",
    "MAX_ID_BYTES": "riido_pg.extract.api",
    "ExtractStats": "riido_pg.extract.stats",
    "FileCache": "riido_pg.extract.cache",
    "Function": "riido_pg.extract.model",
    "FunctionMetadata": "riido_pg.extract.model",
    "is_doc_or_example_path": "riido_pg.extract.paths",
    "is_test_path": "riido_pg.extract.paths",
    "iter_functions": "riido_pg.extract.api",
    "tree_documents": "riido_pg.extract.documents",
    "write_jsonl": "riido_pg.extract.model",
}

if not TYPE_CHECKING:  # type checkers see the imports above instead

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'riido_pg.extract' has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
