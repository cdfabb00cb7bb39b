"""The extraction library: goldens per language, the API, ignore rules, order.

No database is needed. Hostile trees are in ``test_extract_hostile.py``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from support.extract_golden import FIXTURE_LANGUAGES, FIXTURES, GOLDEN, render

from riido_pg.documents import check_document
from riido_pg.errors import InvalidInput
from riido_pg.extract import (
    LANGUAGES,
    ExtractStats,
    Function,
    iter_functions,
    write_jsonl,
)


def run(root: Path, **kwargs: Any) -> tuple[list[Function], ExtractStats]:
    stats = ExtractStats()
    functions = list(iter_functions(root, stats=stats, **kwargs))
    return functions, stats


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def qualnames(functions: list[Function]) -> list[str]:
    return [f.metadata["qualname"] for f in functions]


# --- goldens ------------------------------------------------------------------


@pytest.mark.parametrize("lang", FIXTURE_LANGUAGES)
def test_golden(lang: str) -> None:
    text, stats = render(lang)
    assert text == (GOLDEN / f"{lang}.jsonl").read_text(encoding="utf-8")
    assert stats.problems == []
    assert stats.functions == text.count("\n") > 0


def test_every_language_has_a_fixture() -> None:
    assert set(FIXTURE_LANGUAGES) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert any((FIXTURES / lang).rglob("*.*")), lang


def test_golden_lines_are_canonical_json() -> None:
    for path in sorted(GOLDEN.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            assert list(obj) == ["id", "metadata", "text"]
            meta = obj["metadata"]
            assert obj["id"] == f"{meta['path']}:{meta['qualname']}:{meta['start_line']}"
            assert meta["start_line"] <= meta["end_line"]
            assert (
                json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")) == line
            )


def test_golden_spot_checks() -> None:
    """A few rules stated outright, so a regenerated golden cannot quietly drop them."""
    ids = {
        json.loads(line)["id"]: json.loads(line)
        for path in GOLDEN.glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    assert "server.go:Server.Start:18" in ids  # pointer receiver: Type.Method
    assert "lib.rs:Point.fmt:23" in ids  # impl Trait for Type: Type.fn
    assert "widget.cpp:ui.Widget.render:39" in ids  # out-of-class C++ definition
    assert "widget.cpp:ui.Widget.~Widget:25" in ids
    assert "app.js:api.post:46" in ids  # arrow function bound to an object key
    assert "app.js:Greeter.greet.shout:29" in ids  # nested arrow function
    assert "pkg/shapes.py:Circle.parse.clean:28" in ids
    shop = ids["Shop.java:Shop.count:18"]
    assert shop["text"].startswith("    /**\n     * Counts the items.")
    assert "@Override" in shop["text"]
    assert ids["pkg/shapes.py:Circle.area:21"]["text"].startswith("    @property\n")
    assert ids["pkg/shapes.py:unit_area:10"]["text"].startswith("# Area of a unit square.\n")
    assert ids["lib.rs:add_one:46"]["text"].startswith("/// Adds one.\n#[inline]\n")
    assert not any("prototype_only" in key or "Named.name" in key for key in ids)
    # a function passed to a call is named after the call's binding, at the name's line
    assert ids["wrapped.js:camelCase:6"]["text"].startswith("/**\n * Converts `string`")
    assert ids["wrapped.js:add:11"]["text"].endswith("}, 0);")
    assert "wrapped.js:module.exports.partial.holders:44" in ids
    assert "wrapped.ts:kebabCase:4" in ids and "button.tsx:Button:4" in ids
    assert not any(key.startswith("wrapped.js:") and key.split(":")[1] in (
        "names", "timer", "ready", "made", "left") for key in ids)  # fmt: skip


# --- API ----------------------------------------------------------------------


def test_importing_does_not_load_tree_sitter() -> None:
    code = "import sys, riido_pg.extract; print('tree_sitter' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_root(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such directory"):
        iter_functions(tmp_path / "nope")


def test_root_is_a_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "def f(): pass\n")
    with pytest.raises(InvalidInput, match="not a directory"):
        iter_functions(path)


def test_unknown_language_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        iter_functions(tmp_path, langs=["python", "cobol"])
    message = str(info.value)
    assert message.startswith("unknown language cobol; known: c, cpp, csharp")
    assert message == message.lower()


def test_empty_language_selection(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no language selected"):
        iter_functions(tmp_path, langs=[])


def test_bad_exclude_pattern(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="invalid exclude pattern"):
        iter_functions(tmp_path, excludes=["ok/", "a\\"])


def test_bad_ignore_file_line_is_dropped_and_reported(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "skip.py\n!\n")
    write(tmp_path, "skip.py", "def s(): pass\n")
    write(tmp_path, "keep.py", "def k(): pass\n")
    functions, stats = run(tmp_path)
    assert qualnames(functions) == ["k"]
    assert stats.problems == [(".", "invalid ignore pattern '!'")]


def test_empty_tree_is_not_an_error(tmp_path: Path) -> None:
    functions, stats = run(tmp_path)
    assert functions == []
    assert stats.describe() == "0 functions, no file read"


def test_describe() -> None:
    """The functions, the files with functions of the files read, then what was skipped
    by reason (it said `1463 functions in 236 files (153 unsupported)` of 66 files with
    functions)."""
    stats = ExtractStats(files_seen=3, skipped_unsupported=2, skipped_binary=1)
    assert stats.describe() == (
        "0 functions, no file read; skipped: 2 files in other languages, 1 binary file"
    )
    one = {"files_seen": 1, "files_extracted": 1, "functions": 1}
    assert ExtractStats(**one, files_with_functions=1).describe() == (
        "1 function in the 1 file read"
    )
    assert ExtractStats(**one, files_with_functions=1, skipped_submodules=1).describe() == (
        "1 function in the 1 file read; skipped: 1 submodule not read"
    )
    assert ExtractStats(skipped_ignored=1, skipped_submodules=2).describe() == (
        "0 functions, no file read; skipped: 1 ignored, 2 submodules not read"
    )
    many = ExtractStats(
        files_seen=236,
        files_extracted=83,
        files_with_functions=66,
        functions=1463,
        skipped_unsupported=153,
        skipped_unreadable=1,
        skipped_too_large=2,
    )
    many.tests.add(False, True)
    many.test_functions_left_out = 3
    assert many.describe() == (
        "1463 functions in 66 of the 83 files read; skipped: 153 files in other "
        "languages, 2 files too large, 1 unreadable file; --no-tests left out 1 file "
        "(3 functions)"
    )
    assert ExtractStats(files_seen=2, files_extracted=2).describe() == (
        "0 functions in the 2 files read"
    )


def test_json_line_and_write_jsonl(tmp_path: Path) -> None:
    write(tmp_path, "ünï/cafe.py", 'def café():\n    return "☕"\n')
    functions, _ = run(tmp_path)
    (function,) = functions
    line = function.to_json_line()
    assert line == (
        '{"id":"ünï/cafe.py:café:1","metadata":{"end_line":2,"language":"python",'
        '"path":"ünï/cafe.py","qualname":"café","start_line":1},'
        '"text":"def café():\\n    return \\"☕\\""}'
    )
    out = io.StringIO()
    assert write_jsonl(functions * 2, out) == 2
    assert out.getvalue() == f"{line}\n{line}\n"


def test_langs_restricts(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "def f(): pass\n")
    write(tmp_path, "b.js", "function g() {}\n")
    functions, stats = run(tmp_path, langs=["javascript"])
    assert qualnames(functions) == ["g"]
    assert stats.skipped_unsupported == 1
    assert stats.files_extracted == 1


def test_a_lone_string_is_one_language_or_pattern(tmp_path: Path) -> None:
    write(tmp_path, "a.py", "def f(): pass\n")
    write(tmp_path, "b.py", "def g(): pass\n")
    write(tmp_path, "c.js", "function h() {}\n")
    functions, _ = run(tmp_path, langs="python", excludes="b.py")
    assert qualnames(functions) == ["f"]


def test_threads_do_not_share_parsers() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda lang: render(lang)[0], FIXTURE_LANGUAGES * 3))
    assert results == [render(lang)[0] for lang in FIXTURE_LANGUAGES] * 3


def test_on_file_sees_every_considered_file(tmp_path: Path) -> None:
    for rel in ("b.py", "a/c.txt", "a.go"):
        write(tmp_path, rel, "")
    seen: list[str] = []
    _, stats = run(tmp_path, on_file=seen.append)
    assert seen == ["a.go", "a/c.txt", "b.py"]
    assert stats.files_seen == 3


def test_arguments_checked_before_iteration(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        iter_functions(tmp_path, max_file_bytes=-1)


# --- order and ids ------------------------------------------------------------


def test_files_in_byte_order_of_relative_path(tmp_path: Path) -> None:
    for rel in ("a_b.py", "a/b.py", "a-b.py", "B.py", "é.py", "z.py"):
        write(tmp_path, rel, "def f(): pass\n")
    functions, _ = run(tmp_path)
    paths = [f.metadata["path"] for f in functions]
    assert paths == ["B.py", "a-b.py", "a/b.py", "a_b.py", "z.py", "é.py"]


def test_same_name_same_line_gets_distinct_ids(tmp_path: Path) -> None:
    write(tmp_path, "m.js", "function f(){} function f(){} function f(){}\n")
    functions, _ = run(tmp_path)
    assert [f.id for f in functions] == ["m.js:f:1", "m.js:f:1#2", "m.js:f:1#3"]


def test_long_ids_are_dropped_and_counted(tmp_path: Path) -> None:
    deep = "/".join(["d" * 200] * 6)
    write(tmp_path, f"{deep}/x.py", "def f(): pass\n")
    functions, stats = run(tmp_path)
    assert functions == []
    assert stats.skipped_long_ids == 1
    assert stats.problems[0][1] == "id longer than 1024 bytes"


def test_functions_in_source_order_outer_first(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m.py",
        "class A:\n    def b(self):\n        def c(): pass\n    def d(self): pass\ndef e(): pass\n",
    )
    functions, _ = run(tmp_path)
    assert [f.id for f in functions] == ["m.py:A.b:2", "m.py:A.b.c:3", "m.py:A.d:4", "m.py:e:5"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("var x = wrap(function () {});", ["x:1"]),
        ("const x = wrap(() => 1);", ["x:1"]),
        ("let x = wrap(async function* () {});", ["x:1"]),
        ("export const x = wrap(() => 1);", ["x:1"]),
        ("x = wrap(() => 1);", ["x:1"]),
        ("module.exports.x = wrap(() => 1);", ["module.exports.x:1"]),
        ("exports.x = wrap(() => 1);", ["exports.x:1"]),
        ("const o = { x: wrap(() => 1) };", ["o.x:1"]),
        ("class C { x = wrap(() => 1); }", ["C.x:1"]),
        # the first function in source order, through nested calls
        ("var x = a(b(() => 1), () => 2);", ["x:1"]),
        ("var x = a(1, b(2, c(() => 1)));", ["x:1"]),
        ("var x = a(() => 1, () => 2, () => 3);", ["x:1"]),
        # the called function itself (an IIFE), parentheses and both branches of ?:
        ("var x = (function () { return 1; })();", ["x:1"]),
        ("var x = (() => 1);", ["x:1"]),
        ("var x = c ? () => 1 : () => 2;", ["x:1"]),
        ("var x = c ? y : wrap(() => 1);", ["x:1"]),
        # a name of its own is kept, and nothing else takes the binding's
        ("var x = wrap(function own() {}, () => 1);", ["own:1"]),
        # the name's line, not the function's
        ("var x =\n  wrap(\n    () => 1);", ["x:1"]),
        ("var\n  x = wrap(() => 1);", ["x:2"]),
        # several declarators: each its own
        ("var x = a(() => 1), y = b(() => 2);", ["x:1", "y:1"]),
        # computing with a callback, constructing, destructuring: no name passes
        ("const x = xs.map((v) => v);", []),
        ("const x = xs.filter((v) => v).map((v) => v);", []),
        ("const x = p.then(function () {});", []),
        ("const x = setTimeout(() => 1, 10);", []),
        ("const x = new Promise(function (r) {});", []),
        ("const x = await wrap(() => 1);", []),
        ("const { x } = wrap(() => 1);", []),
        ("wrap(() => 1);", []),
        ("const x = obj.method(1)(() => 1);", ["x:1"]),
        # nested functions take the binding as their prefix
        ("var x = wrap(function () { function inner() {} });", ["x:1", "x.inner:1"]),
    ],
)
def test_functions_passed_to_a_bound_call(tmp_path: Path, source: str, expected: list[str]) -> None:
    for name in ("m.js", "m.ts"):
        write(tmp_path, name, source + "\n")
        functions, stats = run(tmp_path, langs=["javascript" if name == "m.js" else "typescript"])
        assert [f.id for f in functions] == [f"{name}:{e}" for e in expected], name
        assert stats.problems == []
        (tmp_path / name).unlink()


# --- leading comments ---------------------------------------------------------


def test_comment_rules(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m.py",
        "x = 1  # trailing, not kept\n"
        "def a(): pass\n"
        "# separated by a blank line\n"
        "\n"
        "def b(): pass\n"
        "# kept\n"
        "@decorator\n"
        "# kept too\n"
        "def c(): pass\n",
    )
    write(tmp_path, "lib.rs", "//! module docs\nfn f() {}\n")
    functions, _ = run(tmp_path)
    texts = {f.metadata["qualname"]: f.text for f in functions}
    assert texts["a"] == "def a(): pass"
    assert texts["b"] == "def b(): pass"
    assert texts["c"] == "# kept\n@decorator\n# kept too\ndef c(): pass"
    assert texts["f"] == "fn f() {}"


def test_bom_and_crlf(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"\xef\xbb\xbf# doc\r\ndef f():\r\n    pass\r\n")
    functions, stats = run(tmp_path)
    (function,) = functions
    assert function.id == "m.py:f:2"
    assert function.text == "# doc\r\ndef f():\r\n    pass"
    assert stats.problems == []


# --- ignore rules -------------------------------------------------------------


def test_gitignore_nested_negation_and_ignore_file(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.gen.py\nsecret/\nlogs\n")
    write(tmp_path, "a.gen.py", "def gen(): pass\n")
    write(tmp_path, "secret/s.py", "def s(): pass\n")
    write(tmp_path, "logs/l.py", "def l(): pass\n")
    write(tmp_path, "sub/.gitignore", "!keep.gen.py\nlocal.py\n")
    write(tmp_path, "sub/keep.gen.py", "def keep(): pass\n")
    write(tmp_path, "sub/drop.gen.py", "def drop(): pass\n")
    write(tmp_path, "sub/local.py", "def local(): pass\n")
    write(tmp_path, "sub/deeper/local.py", "def deeper_local(): pass\n")
    write(tmp_path, "other/local.py", "def other_local(): pass\n")
    write(tmp_path, "other/.ignore", "x.py\n")
    write(tmp_path, "other/.gitignore", "!x.py\n")
    write(tmp_path, "other/x.py", "def x(): pass\n")
    functions, stats = run(tmp_path)
    assert sorted(qualnames(functions)) == ["keep", "other_local"]
    assert stats.skipped_ignored == 7


def test_git_info_exclude_at_the_root_only_and_below_ignore_files(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "# local\n*.local.py\nscratch/\nkept.py\n")
    write(tmp_path, ".gitignore", "!kept.py\n")
    write(tmp_path, "a.local.py", "def local(): pass\n")
    write(tmp_path, "scratch/s.py", "def scratch(): pass\n")
    write(tmp_path, "kept.py", "def kept(): pass\n")
    write(tmp_path, "sub/.git/info/exclude", "b.py\n")  # not the root: not read
    write(tmp_path, "sub/b.py", "def b(): pass\n")
    functions, stats = run(tmp_path)
    assert sorted(qualnames(functions)) == ["b", "kept"]
    assert stats.skipped_ignored == 2


def test_excludes(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "def a(): pass\n")
    write(tmp_path, "src/test_a.py", "def test_a(): pass\n")
    write(tmp_path, "docs/conf.py", "def setup(): pass\n")
    write(tmp_path, "src/notes.txt", "")
    functions, stats = run(tmp_path, excludes=["test_*.py", "/docs/", "*.txt"])
    assert qualnames(functions) == ["a"]
    assert stats.skipped_ignored == 0  # .gitignore and .ignore only
    assert (stats.excluded.entries, stats.excluded.dirs, stats.excluded.code) == (3, 1, 1)
    assert stats.describe() == "1 function in the 1 file read; skipped: 3 excluded"


@pytest.mark.parametrize(
    ("tree", "excludes", "message"),
    [
        (
            {"a.py": "def a(): pass\n", "b.py": "def b(): pass\n", "r.md": ""},
            ["*.py"],
            "no functions: the exclude patterns matched 2 files in a supported language: "
            "0 functions, no file read; skipped: 1 file in another language, 2 excluded",
        ),
        (
            {"go/a.go": "package a\n", "r.md": ""},
            ["go/"],
            "no functions: the exclude patterns matched 1 directory: "
            "0 functions, no file read; skipped: 1 file in another language, 1 excluded",
        ),
        (
            {"go/a.go": "package a\n", "b.py": "def b(): pass\n"},
            ["go/", "*.py"],
            "no functions: the exclude patterns matched 1 file in a supported language and "
            "1 directory: 0 functions, no file read; skipped: 2 excluded",
        ),
        (
            {"r.md": "", "x.txt": ""},
            ["*.txt"],
            "no functions in a supported language: 0 functions, no file read; skipped: "
            "1 file in another language, 1 excluded",
        ),
        (
            {"a.c": "int f(void);\n"},
            [],
            "no functions: 0 functions in the 1 file read",
        ),
    ],
)
def test_no_functions_says_what_was_left_out(
    tmp_path: Path, tree: dict[str, str], excludes: list[str], message: str
) -> None:
    for rel, text in tree.items():
        write(tmp_path, rel, text)
    functions, stats = run(tmp_path, excludes=excludes)
    assert functions == []
    assert stats.no_functions(tmp_path) == f"{tmp_path}: {message}"


def test_vendored_and_vcs(tmp_path: Path) -> None:
    write(tmp_path, "app.js", "function app() {}\n")
    write(tmp_path, "app.min.js", "function minified() {}\n")
    for folder in ("node_modules/x", "vendor", "third_party", "dist", "build", ".venv", "venv"):
        write(tmp_path, f"{folder}/v.js", "function vendored() {}\n")
    write(tmp_path, "a/__pycache__/c.py", "def cached(): pass\n")
    write(tmp_path, ".git/hooks/h.py", "def hook(): pass\n")
    write(tmp_path, "builder/b.js", "function builder() {}\n")  # only exact names are vendored
    functions, stats = run(tmp_path)
    assert sorted(qualnames(functions)) == ["app", "builder"]
    assert stats.skipped_vendored == 9
    everything, stats = run(tmp_path, include_vendored=True)
    assert len(everything) == 11  # .git is never read
    assert stats.skipped_vendored == 0


# --- a real tree ----------------------------------------------------------------


@pytest.mark.slow
def test_stdlib_subset_is_deterministic() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    outputs = []
    for _ in range(2):
        for package in ("json", "email", "asyncio"):
            stats = ExtractStats()
            out = io.StringIO()
            count = write_jsonl(iter_functions(stdlib / package, stats=stats), out)
            assert count == stats.functions > 100 or package == "json"
            assert stats.files_extracted > 0
            assert stats.skipped_unreadable == stats.skipped_binary == 0
            docs = [json.loads(line) for line in out.getvalue().splitlines()]
            ids = [doc["id"] for doc in docs]
            assert len(ids) == len(set(ids))
            for doc in docs:  # what the loader accepts: no NUL, id and text within limits
                check_document(doc["id"], doc["text"], package)
            assert stats.files_seen == (
                stats.files_extracted
                + stats.skipped_unsupported
                + stats.skipped_binary
                + stats.skipped_too_large
                + stats.skipped_unreadable
                + stats.skipped_undecodable
            )
            outputs.append(out.getvalue())
    assert outputs[:3] == outputs[3:]
    assert any(":JSONDecoder.decode:" in line for line in outputs[0].splitlines())
