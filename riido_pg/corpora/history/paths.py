"""Test, documentation and example code, which is never a question's target.

A function is left out of the targets (it stays a document of its snapshot) when

* its path is a test path or a documentation or example path, by the rules every
  caller shares (:func:`riido_pg.extract.paths.is_test_path`,
  :func:`riido_pg.extract.paths.is_doc_or_example_path`);
* or a part of its qualified name other than its own name is ``test`` or ``tests``
  (a Rust ``#[cfg(test)] mod tests``, a nested test class): test code that neither
  its directory nor its file name marks.
"""

from __future__ import annotations

from riido_pg.extract.paths import is_doc_or_example_path, is_test_path

__all__ = ["TEST_SCOPES", "is_test_or_doc"]

#: Names of an enclosing scope that make a function test code.
TEST_SCOPES = frozenset({"test", "tests"})


def is_test_or_doc(path: str, qualname: str = "") -> bool:
    """Whether a function at ``path`` (relative, ``/``) named ``qualname`` is test,
    docs or example code (``qualname`` empty: whether every function of the file is)."""
    if is_test_path(path) or is_doc_or_example_path(path):
        return True
    return any(part in TEST_SCOPES for part in qualname.split(".")[:-1])
