"""``iter_functions``: a source directory in, one document per function out.

Only the given directory is read; with ``rev``, the tree of that git revision of the
repository at the directory instead (:mod:`riido_pg.extract.gittree`), by the same
rules. Each file is decided in this order: its
path must be valid UTF-8 (else undecodable), its extension must belong to a
selected language (else unsupported, not opened), then it is read (see
``reading``: unreadable, too large, binary, undecodable) and parsed. Nothing
about a single file raises: it is counted in ``ExtractStats`` and, for the
read failures, listed in ``stats.problems``. Bad arguments raise InvalidInput.

Output is deterministic: files in byte order of their relative paths,
functions in source order (by start, outer before inner), so the same tree
gives byte-identical JSON Lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from riido_pg.documents import MAX_ID_BYTES
from riido_pg.errors import InvalidInput
from riido_pg.extract.cache import FileCache, Key
from riido_pg.extract.ignore import IgnoreSpec, compile_excludes
from riido_pg.extract.languages import language_of, select_languages
from riido_pg.extract.model import Function
from riido_pg.extract.paths import is_test_path
from riido_pg.extract.reading import Skipped
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import DiskTree, Entry, Tree, walk

if TYPE_CHECKING:  # the parsers load only once functions are really wanted
    from riido_pg.extract.functions import FileFunctions

__all__ = ["DEFAULT_MAX_FILE_BYTES", "MAX_ID_BYTES", "file_functions", "iter_functions"]

#: Default ``max_file_bytes``: 1 MB, the loader's per-document limit, so any
#: function's text fits in a document.
DEFAULT_MAX_FILE_BYTES = 1_000_000


def _check_root(root: Path) -> str:
    if not root.exists():
        raise InvalidInput(f"{root}: no such directory")
    if not root.is_dir():
        raise InvalidInput(f"{root}: not a directory")
    return os.fspath(root.resolve())


def _count_skip(stats: ExtractStats, rel: str, skipped: Skipped) -> None:
    if skipped.kind == "unreadable":
        stats.skipped_unreadable += 1
    elif skipped.kind == "too_large":
        stats.skipped_too_large += 1
    elif skipped.kind == "binary":
        stats.skipped_binary += 1
    else:
        stats.skipped_undecodable += 1
    stats.problem(rel, skipped.reason)


def _long_id(stats: ExtractStats, rel: str) -> None:
    stats.skipped_long_ids += 1
    stats.problem(rel, f"id longer than {MAX_ID_BYTES} bytes")


def iter_functions(
    root: Path,
    *,
    langs: Iterable[str] | None = None,
    excludes: Sequence[str] = (),
    include_vendored: bool = False,
    no_tests: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    stats: ExtractStats | None = None,
    on_file: Callable[[str], None] | None = None,
    rev: str | None = None,
    cache: FileCache | None = None,
) -> Iterator[Function]:
    """The functions under ``root``, one document each, in a fixed order.

    With ``rev``, ``root`` is a git repository (its work tree's top, a directory in
    it for that subtree, or a bare repository) and the tree of revision ``rev`` is
    read from the repository instead of the directory
    (:func:`riido_pg.extract.gittree.open_revision`).

    ``langs`` restricts to some of ``LANGUAGES`` (default: all); ``excludes``
    are gitignore-style patterns relative to ``root`` (a lone string is one
    language or one pattern, not a sequence of characters); ``include_vendored``
    also reads vendored and generated code; ``no_tests`` leaves out test directories
    and files (:func:`riido_pg.extract.paths.is_test_path`); files over
    ``max_file_bytes`` are skipped. ``stats`` (if given) is filled in as the
    iterator advances and is complete once it is exhausted. ``on_file`` is called
    with each considered file's relative path just before that file is handled.

    ``cache`` (:class:`~riido_pg.extract.cache.FileCache`) keeps the files parsed at
    one revision for the next ones (no effect without ``rev``).

    Arguments are checked when this is called, not at the first ``next()``.
    """
    if max_file_bytes < 0:
        raise InvalidInput("max_file_bytes must not be negative")
    if isinstance(langs, str):
        langs = [langs]
    if isinstance(excludes, str):
        excludes = [excludes]
    selected = select_languages(langs)
    exclude_spec = compile_excludes(list(excludes))
    top = _check_root(Path(root))
    counts = stats if stats is not None else ExtractStats()
    tree: AbstractContextManager[Tree]
    if rev is None:
        tree = nullcontext(DiskTree(top))
    else:
        from riido_pg.extract.gittree import open_revision

        tree = open_revision(Path(root), rev)
    options = (selected, exclude_spec, include_vendored, no_tests, max_file_bytes)
    return _generate(tree, *options, counts, on_file, cache)


def _language(rel: str, selected: frozenset[str]) -> str | Skipped | None:
    """The selected language a file is read as, None (unsupported), or Skipped (its
    name is not UTF-8)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return Skipped("undecodable", "file name is not valid utf-8")
    language_name = language_of(rel.rsplit("/", 1)[-1])
    return language_name if language_name in selected else None


def file_functions(
    tree: Tree,
    entry: Entry,
    selected: frozenset[str],
    max_file_bytes: int,
    stats: ExtractStats,
    cache: FileCache | None = None,
    no_tests: bool = False,
) -> list[Function]:
    """The functions of one file the walk listed, counted in ``stats`` as the walk
    counts them (its name, language, reading, nesting and ids: the module docstring's
    order), except ``files_seen``, which the caller counts. A file ``cache`` holds is
    not read again. ``no_tests`` leaves out the test functions of a file outside test
    paths (:func:`riido_pg.fields.is_test_document`: Rust's ``mod tests`` and
    ``#[test]`` functions); the caller leaves out test paths."""
    # Imported here: the parsers load only once functions are really wanted (and
    # riido_pg.fields imports this package's paths).
    from riido_pg.extract.functions import MAX_NESTING
    from riido_pg.fields import is_test_document

    language_name = _language(entry.rel, selected)
    if isinstance(language_name, Skipped):
        shown = entry.rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        _count_skip(stats, shown, language_name)
        return []
    if language_name is None:
        stats.skipped_unsupported += 1
        return []
    found = _parsed(tree, entry, language_name, max_file_bytes, cache)
    if isinstance(found, Skipped):
        _count_skip(stats, entry.rel, found)
        return []
    stats.files_extracted += 1
    for _ in range(found.long_ids):
        _long_id(stats, entry.rel)
    if found.too_deep:
        stats.skipped_too_deep += found.too_deep
        stats.problem(
            entry.rel,
            f"{found.too_deep} functions nested more than {MAX_NESTING} levels deep",
        )
    in_tests = is_test_path(entry.rel)
    functions: list[Function] = []
    for function in found.functions:
        if len(function.id.encode("utf-8")) > MAX_ID_BYTES:
            _long_id(stats, entry.rel)
            continue
        if not in_tests and is_test_document(function.id, function.text):
            if no_tests:
                stats.inline_tests_left_out += 1
                continue
            stats.inline_tests += 1
        stats.functions += 1
        stats.test_functions += in_tests
        functions.append(function)
    stats.files_with_functions += bool(functions)
    return functions


def _parsed(
    tree: Tree, entry: Entry, language_name: str, max_file_bytes: int, cache: FileCache | None
) -> FileFunctions | Skipped:
    """The file's functions, from ``cache`` when it holds them, or why it is skipped."""
    from riido_pg.extract.functions import extract_functions
    from riido_pg.extract.grammars import grammar_key

    cached = _cache_key(tree, entry, language_name, max_file_bytes, cache)
    source: bytes | Skipped | None = None
    if cache is not None and cached is not None:
        if cache.checks_content:  # shown the bytes, to check its entry against them
            source = tree.read(entry.path, max_file_bytes)
            if isinstance(source, Skipped):
                return source
        found = cache.get(cached, source)
        if found is not None:
            return found
    if source is None:
        source = tree.read(entry.path, max_file_bytes)
    if isinstance(source, Skipped):
        result: FileFunctions | Skipped = source
    else:
        grammar = grammar_key(language_name, entry.rel.rsplit("/", 1)[-1])
        result = extract_functions(grammar, language_name, entry.rel, source)
    if cache is not None and cached is not None:
        cache.put(cached, result, source)
    return result


def _cache_key(
    tree: Tree, entry: Entry, language_name: str, max_file_bytes: int, cache: FileCache | None
) -> Key | None:
    if cache is None:
        return None
    content = tree.content_id(entry.path)
    return None if content is None else (entry.rel, content, language_name, max_file_bytes)


def _unread(
    tree: Tree,
    entries: Sequence[Entry],
    selected: frozenset[str],
    max_file_bytes: int,
    cache: FileCache | None,
) -> list[str]:
    """The files of ``entries`` the walk will read: selected, and not in ``cache``."""
    paths = []
    for e in entries:
        language_name = _language(e.rel, selected)
        if isinstance(language_name, str):
            key = _cache_key(tree, e, language_name, max_file_bytes, cache)
            if key is None or cache is None or cache.checks_content or key not in cache:
                paths.append(e.path)
        elif language_name is not None:
            paths.append(e.path)
    return paths


def _left_out_as_test(
    tree: Tree,
    entry: Entry,
    selected: frozenset[str],
    max_file_bytes: int,
    stats: ExtractStats,
    cache: FileCache | None,
) -> None:
    """Count a test file ``no_tests`` leaves out: a file in a selected language, and
    the functions it holds."""
    code = isinstance(_language(entry.rel, selected), str)
    stats.tests.add(False, code)
    if code:
        stats.test_functions_left_out += len(
            file_functions(tree, entry, selected, max_file_bytes, ExtractStats(), cache)
        )


def _generate(
    tree_context: AbstractContextManager[Tree],
    selected: frozenset[str],
    exclude_spec: IgnoreSpec | None,
    include_vendored: bool,
    no_tests: bool,
    max_file_bytes: int,
    stats: ExtractStats,
    on_file: Callable[[str], None] | None,
    cache: FileCache | None,
) -> Iterator[Function]:
    with tree_context as tree:
        # test code is walked and parsed even with no_tests, only to count the files and
        # functions left out (the note says what --no-tests cost, not how many paths)
        entries = walk(
            tree,
            excludes=exclude_spec,
            include_vendored=include_vendored,
            stats=stats,
            languages=selected,
        )
        tree.plan(_unread(tree, entries, selected, max_file_bytes, cache))
        for entry in entries:
            if no_tests and is_test_path(entry.rel):
                _left_out_as_test(tree, entry, selected, max_file_bytes, stats, cache)
                continue
            stats.files_seen += 1
            if on_file is not None:
                on_file(entry.rel)
            yield from file_functions(tree, entry, selected, max_file_bytes, stats, cache, no_tests)
