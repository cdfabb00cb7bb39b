"""Every README section a comment or docstring cites exists.

Code cites a section by its heading, in double quotes after the word README (as
``README "Loading at size"``), possibly wrapped over comment lines. Each cited heading
must be a heading of README.md or of a Markdown file under docs/ (sections move
there); a heading's trailing parenthetical may be left out of the citation. The test
names every missing citation at once.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from pathlib import Path

from support import REPO

#: Where comments and docstrings cite the README (tests/fixtures is data, not code);
#: riido_pg holds the SQL files and the migrations (the top-level sql and migrations
#: are links to them).
SOURCES = ("riido_pg", "tests", "bench")
SUFFIXES = (".py", ".sql")
SKIP = REPO / "tests" / "fixtures"

_CITATION = re.compile("README" + r'\s+"([^"\n]{1,120})"')
_COMMENT_MARK = re.compile(r"^\s*(?:#|--|//|\*)?\s?")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)$")


def citations(text: str) -> Iterator[tuple[int, str]]:
    """(line number, heading) of each citation in ``text``; a citation may wrap over
    lines, each starting with a comment mark (``#``, ``--``, ``//``, ``*``)."""
    parts, starts, offset = [], [], 0
    for line in text.splitlines():
        part = _COMMENT_MARK.sub("", line, count=1)
        parts.append(part)
        starts.append(offset)
        offset += len(part) + 1
    flat = "\n".join(parts).replace("\n", " ")
    for match in _CITATION.finditer(flat):
        yield bisect.bisect_right(starts, match.start()), " ".join(match.group(1).split())


def headings(markdown: str) -> set[str]:
    """The headings of a Markdown text (not the ``#`` lines of its code blocks), each
    also without a trailing parenthetical."""
    found: set[str] = set()
    fenced = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            heading = " ".join(match.group(1).split())
            found |= {heading, _PARENTHETICAL.sub("", heading)}
    return found


def _documented() -> set[str]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    return set().union(*(headings(page.read_text(encoding="utf-8")) for page in pages))


def _sources() -> Iterator[Path]:
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file() and SKIP not in path.parents:
                yield path


def test_every_cited_readme_section_exists() -> None:
    documented = _documented()
    cited, missing = 0, []
    for path in _sources():
        for line, heading in citations(path.read_text(encoding="utf-8")):
            cited += 1
            if heading not in documented:
                missing.append(f"{path.relative_to(REPO)}:{line}: {heading!r}")
    assert cited > 20  # the scan finds the citations there are
    assert missing == [], "sections cited but not found:\n" + "\n".join(missing)


def test_a_wrapped_citation_is_read_whole() -> None:
    text = (
        '"""Intro (R'
        + 'EADME "Loading at\n    size").\n"""\n# x (R'
        + 'EADME "More than\n# one server")\n'
    )
    assert list(citations(text)) == [(1, "Loading at size"), (4, "More than one server")]
    sql = "-- what it does (R" + 'EADME "Ranking"), and\n-- more\n'
    assert list(citations(sql)) == [(1, "Ranking")]


def test_headings_skip_code_blocks_and_may_drop_a_parenthetical() -> None:
    markdown = "# Top\n\n```sh\n# not a heading\n```\n\n### A learned hint source (`--model`)\n"
    assert headings(markdown) == {
        "Top",
        "A learned hint source (`--model`)",
        "A learned hint source",
    }
