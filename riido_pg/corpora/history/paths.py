"""Test, documentation and example code, which is never a question's target.

A function is left out of the targets (it stays a document of its snapshot) when

* a directory of its path, compared case-insensitively, is one of
  :data:`SKIPPED_DIRS` (``test``, ``tests``, ``testing``, ``__tests__``, ``spec``,
  ``testdata``, ``fixtures``, ``doc``, ``docs``, ``example``, ``examples`` ...);
* its file name is a test file by the usual conventions (:data:`_TEST_FILE`):
  ``test_*.py``, ``*_test.py``, ``conftest.py``, ``*_test.go``, ``*.test.ts``,
  ``*.spec.js``, ``*Test.java``, ``*Tests.cs``, ``*_spec.rb``, ``*_test.cc`` ...;
* or a part of its qualified name other than its own name is ``test`` or ``tests``
  (a Rust ``#[cfg(test)] mod tests``, a nested test class).
"""

from __future__ import annotations

import re

__all__ = ["SKIPPED_DIRS", "is_test_or_doc"]

SKIPPED_DIRS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "__tests__",
        "__mocks__",
        "spec",
        "specs",
        "testdata",
        "test_data",
        "fixtures",
        "doc",
        "docs",
        "documentation",
        "example",
        "examples",
        "sample",
        "samples",
        "demo",
        "demos",
    }
)
_TEST_FILE = re.compile(
    r"^(?:test_.*\.py|.*_tests?\.py|conftest\.py|.*_test\.go"
    r"|.*\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|.*Tests?\.(?:java|kt|kts|cs)|(?:test_.*|.*_(?:test|spec))\.rb"
    r"|.*_(?:test|unittest)\.(?:c|cc|cpp|cxx|rs))$"
)


def is_test_or_doc(path: str, qualname: str) -> bool:
    """Whether a function at ``path`` (relative, ``/``) is test, docs or example code."""
    *dirs, name = path.split("/")
    if any(d.lower() in SKIPPED_DIRS for d in dirs):
        return True
    if _TEST_FILE.match(name):
        return True
    return any(part in ("test", "tests") for part in qualname.split(".")[:-1])
