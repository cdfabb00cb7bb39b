"""Which paths hold tests, and which hold documentation or examples.

One rule for every caller (``riido-pg extract`` and ``load DIR`` with ``no_tests``,
the note counting test functions, the corpus builders). A path is relative, its parts
separated by ``/``; names are compared exactly (case matters).

A **test path** has

* a directory named ``test``, ``tests``, ``testing``, ``testdata``, ``__tests__`` or
  ``spec`` anywhere above the file, or
* a file name that is one of the conventions for test code: ``test_*`` (pytest,
  minitest, C), a name before its first dot of ``test`` or ``tests`` or ending in
  ``_test``, ``_tests``, ``_spec``, ``_unittest`` (Go, Python, Ruby, C++), ``Test`` or
  ``Tests`` (JUnit, Kotlin, xUnit: ``ParserTest.java``, ``ParserTests.cs``), a
  ``.test.`` or ``.spec.`` part (``parser.test.ts``, ``button.spec.jsx``), or
  ``conftest.py``.

``click/testing.py`` (a module named ``testing``, not a directory) and ``latest.py``
are not test paths; ``pkg/tests/helpers.py`` and ``src/__tests__/app.js`` are.

A **documentation or example path** has a directory named ``doc``, ``docs``,
``documentation``, ``example``, ``examples``, ``demo``, ``demos``, ``sample``,
``samples``, ``benchmark`` or ``benchmarks`` anywhere above the file (file names alone
do not count: ``example.py`` at the top of a package is usually code).
"""

from __future__ import annotations

__all__ = [
    "DOC_OR_EXAMPLE_DIRS",
    "TEST_DIRS",
    "is_doc_or_example_path",
    "is_test_file_name",
    "is_test_path",
]

TEST_DIRS = frozenset({"test", "tests", "testing", "testdata", "__tests__", "spec"})
DOC_OR_EXAMPLE_DIRS = frozenset(
    {
        "doc",
        "docs",
        "documentation",
        "example",
        "examples",
        "demo",
        "demos",
        "sample",
        "samples",
        "benchmark",
        "benchmarks",
    }
)
_TEST_STEM_ENDINGS = ("_test", "_tests", "_spec", "_unittest", "Test", "Tests")


def is_test_file_name(name: str) -> bool:
    """Whether a file name alone says the file is test code."""
    if name.startswith("test_") or name == "conftest.py":
        return True
    stem = name.split(".", 1)[0]
    if stem in ("test", "tests") or stem.endswith(_TEST_STEM_ENDINGS):
        return True
    middle = name.split(".")[1:-1]
    return "test" in middle or "spec" in middle


def is_test_path(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is test code: a test directory
    above it or a test file name."""
    *dirs, name = path.split("/")
    return any(part in TEST_DIRS for part in dirs) or is_test_file_name(name)


def is_doc_or_example_path(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) lies in a documentation, example,
    demo, sample or benchmark directory."""
    *dirs, _name = path.split("/")
    return any(part in DOC_OR_EXAMPLE_DIRS for part in dirs)
