"""Which languages are extracted, and which file names belong to each.

A file's language is decided by its extension alone, compared case-sensitively
(``.C`` is not C), except that ``.min.js``-style minified names are handled by
the walk, not here. ``.h`` is C: C++ headers named ``.h`` are parsed with the C
grammar, so their in-class methods are missed; name them ``.hpp``/``.hh``.
"""

from __future__ import annotations

from collections.abc import Iterable

from riido_pg.errors import InvalidInput

__all__ = ["LANGUAGES", "language_of", "select_languages"]

#: Language name -> the file extensions parsed as that language.
LANGUAGES: dict[str, tuple[str, ...]] = {
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
    "csharp": (".cs",),
    "go": (".go",),
    "java": (".java",),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "kotlin": (".kt", ".kts"),
    "python": (".py", ".pyi"),
    "ruby": (".rb",),
    "rust": (".rs",),
    "typescript": (".ts", ".mts", ".cts", ".tsx"),
}

_BY_EXTENSION: dict[str, str] = {ext: name for name, exts in LANGUAGES.items() for ext in exts}


def language_of(file_name: str) -> str | None:
    """The language of a file name (its last suffix), or None when unsupported."""
    dot = file_name.rfind(".")
    if dot <= 0:
        return None
    return _BY_EXTENSION.get(file_name[dot:])


def select_languages(langs: Iterable[str] | None) -> frozenset[str]:
    """The languages to extract: all of them for None, else exactly ``langs``.

    An unknown name raises InvalidInput listing the known ones; an empty
    selection is refused too, since it could only ever extract nothing.
    """
    if langs is None:
        return frozenset(LANGUAGES)
    chosen = frozenset(langs)
    unknown = sorted(chosen - LANGUAGES.keys())
    if unknown:
        raise InvalidInput(
            f"unknown language {', '.join(unknown)}; known: {', '.join(sorted(LANGUAGES))}"
        )
    if not chosen:
        raise InvalidInput(f"no language selected; known: {', '.join(sorted(LANGUAGES))}")
    return chosen
