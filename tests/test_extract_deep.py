"""Extraction stays linear in a file's size however deeply it nests.

``riido_pg.extract.functions`` walks each tree once, top down, and bounds nesting
(``MAX_NESTING`` functions and named blocks; ``MAX_SYNTAX_DEPTH`` tree levels). These
tests count the walk's steps (``FileFunctions.steps``) instead of timing it: at most a
few per tree node, at every depth and width, in every language; a file nested far
deeper than the bounds still finishes and says how many functions it left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from riido_pg.extract import ExtractStats, iter_functions
from riido_pg.extract.functions import (
    MAX_NESTING,
    MAX_SYNTAX_DEPTH,
    FileFunctions,
    extract_functions,
)
from riido_pg.extract.grammars import parser

#: Steps the walk may take per tree node (each node looked at once, or twice where a
#: big subtree is counted again, plus the steps back over comments and wrappers).
STEPS_PER_NODE = 3


class Nesting:
    """Source with ``depth`` levels of nesting, ``width`` times over."""

    def __init__(
        self,
        language: str,
        one: Callable[[int], str],
        functions: Callable[[int], int],
        outer: int = 0,
        name: str = "f",
    ) -> None:
        self.language = language
        self.one = one
        #: How many functions ``depth`` levels hold.
        self.functions = functions
        #: Named blocks around the outermost function (they count towards the bound).
        self.outer = outer
        self.name = name

    def source(self, depth: int, width: int = 1) -> bytes:
        return (self.one(depth) * width).encode()


def _python(depth: int) -> str:
    return "".join(" " * i + "def f():\n" for i in range(depth)) + " " * depth + "pass\n"


#: Grammar key -> nesting. C and Go have no nested named functions (blocks and function
#: literals nest instead); C++ nests structs around one method.
NESTINGS: dict[str, Nesting] = {
    "python": Nesting("python", _python, lambda d: d),
    "javascript": Nesting(
        "javascript", lambda d: "function f() {" * d + "}" * d + "\n", lambda d: d
    ),
    "typescript": Nesting(
        "typescript", lambda d: "function f(): void {" * d + "}" * d + "\n", lambda d: d
    ),
    "tsx": Nesting("typescript", lambda d: "const f = () => {" * d + "}" * d + "\n", lambda d: d),
    "go": Nesting("go", lambda d: "func f() {" + "func() {" * d + "}" * d + "}\n", lambda d: 1),
    "java": Nesting(
        "java",
        lambda d: "class A {" + "void f() { new Object() {" * d + "};}" * d + "}\n",
        lambda d: d,
        outer=1,
    ),
    "kotlin": Nesting("kotlin", lambda d: "fun f() {" * d + "}" * d + "\n", lambda d: d),
    "csharp": Nesting(
        "csharp",
        lambda d: "class A {" + "void F() {" * d + "}" * d + "}\n",
        lambda d: d,
        outer=1,
        name="F",
    ),
    "rust": Nesting("rust", lambda d: "fn f() {" * d + "}" * d + "\n", lambda d: d),
    "c": Nesting("c", lambda d: "void f() {" + "{" * d + "}" * d + "}\n", lambda d: 1),
    "cpp": Nesting(
        "cpp", lambda d: "struct A {" * d + "void f() {}" + "};" * d + "\n", lambda d: 1
    ),
    "ruby": Nesting("ruby", lambda d: "def f\n" * d + "end\n" * d, lambda d: d),
}

#: tree-sitter-python's scanner keeps about 500 indentation levels; deeper is an error.
PYTHON_DEPTH = 500


def extract(key: str, src: bytes) -> FileFunctions:
    return extract_functions(key, NESTINGS[key].language, "deep", src)


def nodes(key: str, src: bytes) -> int:
    return parser(key).parse(src).root_node.descendant_count


def check_linear(key: str, src: bytes, result: FileFunctions) -> None:
    assert result.steps <= STEPS_PER_NODE * nodes(key, src)
    # every byte is in the text of at most MAX_NESTING + 1 functions
    assert sum(len(f.text.encode()) for f in result.functions) <= (MAX_NESTING + 1) * len(src)


def levels(key: str, depth: int) -> int:
    """Functions the bound keeps when ``depth`` of them nest (C, Go: one; C++: one
    method inside ``depth`` structs)."""
    nesting = NESTINGS[key]
    if key == "cpp":
        return 1 if depth < MAX_NESTING else 0
    return min(nesting.functions(depth), MAX_NESTING - nesting.outer)


@pytest.mark.parametrize("key", sorted(NESTINGS))
def test_deep_nesting_keeps_the_outer_levels_and_counts_the_rest(key: str) -> None:
    depth = PYTHON_DEPTH if key == "python" else 2000
    nesting = NESTINGS[key]
    src = nesting.source(depth)
    result = extract(key, src)
    kept = levels(key, depth)
    assert len(result.functions) == kept
    total = 1 if key in ("c", "go", "cpp") else depth
    assert result.too_deep == total - kept
    if key not in ("c", "go", "cpp"):
        prefix = "A." if nesting.outer else ""
        assert [f.metadata["qualname"] for f in result.functions] == [
            prefix + ".".join([nesting.name] * level) for level in range(1, kept + 1)
        ]
    check_linear(key, src, result)


@settings(max_examples=60, deadline=None)
@given(
    key=st.sampled_from(sorted(NESTINGS)),
    depth=st.integers(min_value=1, max_value=2500),
    width=st.integers(min_value=1, max_value=40),
)
def test_steps_stay_linear_at_any_depth_and_width(key: str, depth: int, width: int) -> None:
    depth = min(depth, PYTHON_DEPTH) if key == "python" else depth
    width = min(width, max(1, 5000 // depth))  # files of a few hundred kilobytes at most
    src = NESTINGS[key].source(depth, width)
    result = extract(key, src)
    assert len(result.functions) == width * levels(key, depth)
    check_linear(key, src, result)


@pytest.mark.parametrize("key", ["javascript", "kotlin", "ruby", "java"])
def test_steps_per_byte_deep_within_a_constant_factor_of_flat(key: str) -> None:
    deep = NESTINGS[key].source(2000)
    flat = NESTINGS[key].source(1, 2000)
    per_byte_deep = extract(key, deep).steps / len(deep)
    per_byte_flat = extract(key, flat).steps / len(flat)
    assert per_byte_deep <= 3 * per_byte_flat


def test_a_wide_file_is_linear() -> None:
    src = "".join(f"// f{i}\nfunction f{i}() {{ return {i} }}\n" for i in range(20_000)).encode()
    result = extract_functions("javascript", "javascript", "wide.js", src)
    assert len(result.functions) == 20_000 and result.too_deep == 0
    assert result.functions[-1].text == "// f19999\nfunction f19999() { return 19999 }"
    assert result.steps <= STEPS_PER_NODE * nodes("javascript", src)


@pytest.mark.parametrize("extra", [-2, -1, 0, 1, 2, 10])
def test_below_the_syntax_depth_functions_are_counted_not_lost(extra: int) -> None:
    """A function at the bottom of about MAX_SYNTAX_DEPTH brackets is extracted or
    counted as too deep, never dropped silently."""
    brackets = MAX_SYNTAX_DEPTH + extra
    src = ("x = " + "[" * brackets + "function g() {}" + "]" * brackets + "\n").encode()
    result = extract_functions("javascript", "javascript", "b.js", src)
    assert len(result.functions) + result.too_deep == 1
    assert result.steps <= STEPS_PER_NODE * nodes("javascript", src)


def test_ruby_methods_below_the_syntax_depth_are_counted() -> None:
    depth = 2 * MAX_SYNTAX_DEPTH
    src = ("x = " + "[" * depth + "def g; end, def h; end" + "]" * depth + "\n").encode()
    result = extract_functions("ruby", "ruby", "b.rb", src)
    assert (result.functions, result.too_deep) == ([], 2)


def test_a_big_subtree_without_functions_is_not_counted() -> None:
    data = "[" + ", ".join(str(i) for i in range(60_000)) + "]"
    src = f"const table = {data};\nfunction after() {{}}\n".encode()
    result = extract_functions("javascript", "javascript", "t.js", src)
    assert ([f.id for f in result.functions], result.too_deep) == (["t.js:after:2"], 0)


def test_stats_and_note_count_what_is_nested_too_deeply(tmp_path: Path) -> None:
    (tmp_path / "deep.js").write_text("function f(){" * 1000 + "}" * 1000)
    (tmp_path / "ok.js").write_text("function g() {}\n")
    stats = ExtractStats()
    functions = list(iter_functions(tmp_path, stats=stats))
    assert len(functions) == MAX_NESTING + 1
    assert stats.skipped_too_deep == 1000 - MAX_NESTING
    assert stats.problems == [("deep.js", "800 functions nested more than 200 levels deep")]
    assert stats.describe() == (
        "201 functions in the 2 files read; skipped: 800 functions nested too deeply"
    )


def test_the_extractor_never_searches_up_the_tree() -> None:
    """``Node.parent`` and the sibling lookups search down from the root on every call
    (time proportional to the depth): the walk carries what it needs instead."""
    package = Path(__file__).resolve().parent.parent / "riido_pg" / "extract"
    banned = re.compile(r"\w\.(parent|prev_sibling|prev_named_sibling|next_sibling|"
                        r"next_named_sibling|child_with_descendant)\b(?!`)")  # fmt: skip
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if banned.search(line) and not line.lstrip().startswith("#")
    ]
    assert offenders == []
