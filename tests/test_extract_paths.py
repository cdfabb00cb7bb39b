"""Test paths and documentation/example paths (``riido_pg.extract.paths``), and leaving
tests out of an extraction (``no_tests``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from riido_pg.extract import ExtractStats, iter_functions
from riido_pg.extract.paths import (
    DOC_OR_EXAMPLE_DIRS,
    TEST_DIRS,
    is_doc_or_example_path,
    is_test_file_name,
    is_test_path,
)

TEST_PATHS = [
    "tests/helpers.py",
    "pkg/test/helpers.py",
    "sqlalchemy/testing/fixtures.py",
    "go/testdata/input.go",
    "src/__tests__/app.js",
    "spec/models/user_spec.rb",
    "pkg/test_core.py",
    "pkg/core_test.py",
    "pkg/conftest.py",
    "server_test.go",
    "lib/widget_unittest.cc",
    "test/test_helper.rb",
    "user_spec.rb",
    "app.test.js",
    "app.test.tsx",
    "button.spec.ts",
    "button.spec.jsx",
    "src/main/java/ParserTest.java",
    "ParserTests.cs",
    "ParserTest.kt",
    "test.py",
    "tests.py",
    "test_utils.c",
]
NOT_TEST_PATHS = [
    "sqlalchemy/orm/session.py",
    "click/testing.py",
    "pkg/contest.py",
    "pkg/latest.py",
    "Contest.java",
    "attest.go",
    "testing_tools/x.py",
    "mytests/x.py",
    "src/spec.js",
    "protest_test_data.txt.bak",
    "docs/conf.py",
    "latest/testimony.py",
]


@pytest.mark.parametrize("path", TEST_PATHS)
def test_test_paths(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize("path", NOT_TEST_PATHS)
def test_not_test_paths(path: str) -> None:
    assert not is_test_path(path)


_name = st.text(st.sampled_from("abcxyz_.-"), min_size=1, max_size=12).filter(
    lambda n: not is_test_file_name(n) and n not in TEST_DIRS | DOC_OR_EXAMPLE_DIRS
)


@given(dirs=st.lists(_name, max_size=4), name=_name, test_dir=st.sampled_from(sorted(TEST_DIRS)))
def test_a_test_directory_anywhere_above_makes_a_test_path(
    dirs: list[str], name: str, test_dir: str
) -> None:
    assert not is_test_path("/".join([*dirs, name]))
    for at in range(len(dirs) + 1):
        assert is_test_path("/".join([*dirs[:at], test_dir, *dirs[at:], name]))
    # a file named like a test directory is not a test path by that alone
    assert is_test_path("/".join([*dirs, test_dir])) == is_test_file_name(test_dir)


@given(dirs=st.lists(_name, max_size=4), name=_name)
def test_only_the_file_name_and_the_directories_count(dirs: list[str], name: str) -> None:
    path = "/".join([*dirs, name])
    assert is_test_path(path) is False
    assert is_test_path(f"{path.rsplit('/', 1)[0]}/test_{name}" if dirs else f"test_{name}")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/conf.py", True),
        ("doc/tutorial/step1.py", True),
        ("documentation/x.js", True),
        ("examples/basic/main.go", True),
        ("example/app.py", True),
        ("demo/index.ts", True),
        ("demos/a.rs", True),
        ("samples/s.cs", True),
        ("sample/s.kt", True),
        ("benchmarks/bench_x.py", True),
        ("benchmark/b.c", True),
        ("pkg/example.py", False),
        ("docs.py", False),
        ("src/docstring.py", False),
        ("tests/docs_test.py", False),
        ("Docs/x.py", False),
    ],
)
def test_doc_or_example_paths(path: str, expected: bool) -> None:
    assert is_doc_or_example_path(path) is expected


@given(
    dirs=st.lists(_name, max_size=4), name=_name, doc=st.sampled_from(sorted(DOC_OR_EXAMPLE_DIRS))
)
def test_a_doc_directory_anywhere_above(dirs: list[str], name: str, doc: str) -> None:
    assert not is_doc_or_example_path("/".join([*dirs, name]))
    assert is_doc_or_example_path("/".join([doc, *dirs, name]))
    assert not is_doc_or_example_path("/".join([*dirs, doc]))  # the file's own name


# --- leaving tests out --------------------------------------------------------

TREE = {
    "src/app.py": "def app(): pass\n",
    "src/app_test.go": "package src\nfunc TestApp() {}\n",
    "src/app.test.ts": "function t() {}\n",
    "src/__tests__/a.js": "function a() {}\n",
    "tests/test_app.py": "def test_app(): pass\n",
    "tests/conftest.py": "def fixture(): pass\n",
    "spec/app_spec.rb": "def it; end\n",
    "src/AppTest.java": "class AppTest { void t() {} }\n",
    "src/notes_test.txt": "",
    "src/testing.py": "def helper(): pass\n",
}


def make_tree(root: Path) -> None:
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_test_functions_are_kept_and_counted(tmp_path: Path) -> None:
    make_tree(tmp_path)
    stats = ExtractStats()
    functions = list(iter_functions(tmp_path, stats=stats))
    paths = [f.metadata["path"] for f in functions]
    assert stats.test_functions == sum(is_test_path(p) for p in paths) == 7
    assert stats.functions == 9


def test_no_tests_leaves_test_directories_and_files_out(tmp_path: Path) -> None:
    make_tree(tmp_path)
    stats = ExtractStats()
    functions = list(iter_functions(tmp_path, no_tests=True, stats=stats))
    assert [f.id for f in functions] == ["src/app.py:app:1", "src/testing.py:helper:1"]
    # what the user gives up: the 7 test files in a supported language (not the .txt)
    # and their 7 functions, read only to be counted
    assert (stats.tests.entries, stats.tests.dirs, stats.tests.code) == (8, 0, 7)
    assert (stats.test_functions, stats.test_functions_left_out) == (0, 7)
    assert stats.describe() == (
        "2 functions in the 2 files read; --no-tests left out 7 files (7 functions)"
    )


def test_no_tests_with_nothing_else_says_so(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    (tmp_path / "b_test.go").write_text("package b\nfunc TestB() {}\n")
    stats = ExtractStats()
    assert list(iter_functions(tmp_path, no_tests=True, stats=stats)) == []
    assert stats.no_functions(tmp_path) == (
        f"{tmp_path}: no functions: left out as tests: 2 files in a supported language: "
        "0 functions, no file read; --no-tests left out 2 files (2 functions)"
    )


RUST_SOURCE = """\
pub fn reserve(n: usize) {}

#[test]
fn test_bounds() {}

#[tokio::test(flavor = "multi_thread")]
async fn serves() {}

#[cfg(test)]
mod tests {
    fn helper() {}

    #[test]
    fn rejects_empty() {}
}

fn outer() {
    #[test]
    fn inner() {}
}
"""


def test_no_tests_leaves_rust_tests_in_source_files_out(tmp_path: Path) -> None:
    """Rust keeps unit tests in the file they test: ``no_tests`` leaves out the
    functions of a test module and those a test attribute marks
    (:func:`riido_pg.fields.is_test_document`), and counts them."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "map.rs").write_text(RUST_SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "map.rs").write_text("#[test]\nfn it_works() {}\n")
    stats = ExtractStats()
    every = [f.id for f in iter_functions(tmp_path, stats=stats)]
    assert every == [
        "src/map.rs:reserve:1",
        "src/map.rs:test_bounds:4",
        "src/map.rs:serves:7",
        "src/map.rs:tests.helper:11",
        "src/map.rs:tests.rejects_empty:14",
        "src/map.rs:outer:17",
        "src/map.rs:outer.inner:19",
        "tests/map.rs:it_works:2",
    ]
    assert (stats.test_functions, stats.inline_tests) == (1, 5)
    stats = ExtractStats()
    kept = [f.id for f in iter_functions(tmp_path, no_tests=True, stats=stats)]
    # outer's text holds inner's attribute in its body, not among its leading lines:
    # outer is no test; inner's own text starts with the attribute: a test
    assert kept == ["src/map.rs:reserve:1", "src/map.rs:outer:17"]
    assert (stats.inline_tests, stats.inline_tests_left_out) == (0, 5)
    assert stats.describe() == (
        "2 functions in the 1 file read; --no-tests left out 1 file (1 function) and "
        "5 tests in other files"
    )
