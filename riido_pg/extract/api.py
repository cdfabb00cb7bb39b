"""``iter_functions``: a source directory in, one document per function out.

Only the given directory is read. Each file is decided in this order: its
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
from pathlib import Path

from pathspec import GitIgnoreSpec

from riido_pg.documents import MAX_ID_BYTES
from riido_pg.errors import InvalidInput
from riido_pg.extract.ignore import compile_excludes
from riido_pg.extract.languages import language_of, select_languages
from riido_pg.extract.model import Function
from riido_pg.extract.paths import is_test_path
from riido_pg.extract.reading import Skipped, read_source
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import walk

__all__ = ["DEFAULT_MAX_FILE_BYTES", "MAX_ID_BYTES", "iter_functions"]

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
) -> Iterator[Function]:
    """The functions under ``root``, one document each, in a fixed order.

    ``langs`` restricts to some of ``LANGUAGES`` (default: all); ``excludes``
    are gitignore-style patterns relative to ``root`` (a lone string is one
    language or one pattern, not a sequence of characters); ``include_vendored``
    also reads vendored and generated code; ``no_tests`` leaves out test directories
    and files (:func:`riido_pg.extract.paths.is_test_path`); files over
    ``max_file_bytes`` are skipped. ``stats`` (if given) is filled in as the
    iterator advances and is complete once it is exhausted. ``on_file`` is called
    with each considered file's relative path just before that file is handled.

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
    return _generate(
        top, selected, exclude_spec, include_vendored, no_tests, max_file_bytes, counts, on_file
    )


def _generate(
    top: str,
    selected: frozenset[str],
    exclude_spec: GitIgnoreSpec | None,
    include_vendored: bool,
    no_tests: bool,
    max_file_bytes: int,
    stats: ExtractStats,
    on_file: Callable[[str], None] | None,
) -> Iterator[Function]:
    # Imported here: the parsers load only once functions are really wanted.
    from riido_pg.extract.functions import MAX_NESTING, extract_functions
    from riido_pg.extract.grammars import grammar_key

    entries = walk(
        top,
        excludes=exclude_spec,
        include_vendored=include_vendored,
        stats=stats,
        no_tests=no_tests,
        languages=selected,
    )
    for entry in entries:
        stats.files_seen += 1
        if on_file is not None:
            on_file(entry.rel)
        try:
            entry.rel.encode("utf-8")
        except UnicodeEncodeError:
            shown = entry.rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            _count_skip(stats, shown, Skipped("undecodable", "file name is not valid utf-8"))
            continue
        name = entry.rel.rsplit("/", 1)[-1]
        language_name = language_of(name)
        if language_name is None or language_name not in selected:
            stats.skipped_unsupported += 1
            continue
        source = read_source(entry.path, max_file_bytes)
        if isinstance(source, Skipped):
            _count_skip(stats, entry.rel, source)
            continue
        stats.files_extracted += 1
        key = grammar_key(language_name, name)
        found = extract_functions(key, language_name, entry.rel, source)
        for _ in range(found.long_ids):
            _long_id(stats, entry.rel)
        if found.too_deep:
            stats.skipped_too_deep += found.too_deep
            stats.problem(
                entry.rel,
                f"{found.too_deep} functions nested more than {MAX_NESTING} levels deep",
            )
        in_tests = is_test_path(entry.rel)
        for function in found.functions:
            if len(function.id.encode("utf-8")) > MAX_ID_BYTES:
                _long_id(stats, entry.rel)
                continue
            stats.functions += 1
            stats.test_functions += in_tests
            yield function
