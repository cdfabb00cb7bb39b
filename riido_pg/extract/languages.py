"""Which languages are extracted: one record each (:class:`SourceLanguage`) with the
file names that belong to it, its tree-sitter grammar and its naming rules.

A file's language is decided by its extension alone, compared case-sensitively
(``.C`` is not C), except that ``.min.js``-style minified names are handled by
the walk, not here. ``.h`` is C: C++ headers named ``.h`` are parsed with the C
grammar, so their in-class methods are missed; name them ``.hpp``/``.hh``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from riido_pg.errors import InvalidInput
from riido_pg.extract import rules
from riido_pg.extract.rules import Rules

__all__ = ["LANGUAGES", "Grammar", "SourceLanguage", "language_of", "select_languages"]


@dataclass(frozen=True, slots=True)
class Grammar:
    """A tree-sitter grammar from its wheel: ``function`` of ``module`` returns the
    compiled language; ``key`` names it (one parser and one query per key)."""

    key: str
    module: str
    function: str = "language"


@dataclass(frozen=True, slots=True)
class SourceLanguage:
    """One extracted language: its name, the file extensions parsed as it, its grammar
    and its naming rules (:mod:`riido_pg.extract.rules`)."""

    name: str
    extensions: tuple[str, ...]
    grammar: Grammar
    rules: Rules
    #: Extensions parsed with another grammar (TypeScript's ``.tsx``: the TSX one).
    variants: tuple[tuple[str, Grammar], ...] = ()

    @property
    def grammars(self) -> tuple[Grammar, ...]:
        return (self.grammar, *(g for _, g in self.variants))

    def grammar_for(self, file_name: str) -> Grammar:
        """The grammar a file of this language named ``file_name`` is parsed with."""
        for extension, grammar in self.variants:
            if file_name.endswith(extension):
                return grammar
        return self.grammar


def _language(
    name: str, extensions: tuple[str, ...], rule_set: Rules, module: str
) -> SourceLanguage:
    """A language whose one grammar is ``module``'s ``language()``, keyed by its name."""
    return SourceLanguage(name, extensions, Grammar(name, module), rule_set)


#: Language name -> the language.
LANGUAGES: dict[str, SourceLanguage] = {
    lang.name: lang
    for lang in (
        _language("c", (".c", ".h"), rules.C, "tree_sitter_c"),
        _language(
            "cpp",
            (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
            rules.CPP,
            "tree_sitter_cpp",
        ),
        _language("csharp", (".cs",), rules.CSHARP, "tree_sitter_c_sharp"),
        _language("go", (".go",), rules.GO, "tree_sitter_go"),
        _language("java", (".java",), rules.JAVA, "tree_sitter_java"),
        _language(
            "javascript", (".js", ".mjs", ".cjs", ".jsx"), rules.JS, "tree_sitter_javascript"
        ),
        _language("kotlin", (".kt", ".kts"), rules.KOTLIN, "tree_sitter_kotlin"),
        _language("python", (".py", ".pyi"), rules.PYTHON, "tree_sitter_python"),
        _language("ruby", (".rb",), rules.RUBY, "tree_sitter_ruby"),
        _language("rust", (".rs",), rules.RUST, "tree_sitter_rust"),
        SourceLanguage(
            "typescript",
            (".ts", ".mts", ".cts", ".tsx"),
            Grammar("typescript", "tree_sitter_typescript", "language_typescript"),
            rules.JS,
            variants=((".tsx", Grammar("tsx", "tree_sitter_typescript", "language_tsx")),),
        ),
    )
}

_BY_EXTENSION: dict[str, str] = {
    ext: name for name, lang in LANGUAGES.items() for ext in lang.extensions
}


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
