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

Importing this package does not load tree-sitter; the first extraction does.
"""

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
