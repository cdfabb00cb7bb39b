"""The extraction fixtures and their golden JSON Lines, shared by the tests.

Each directory ``tests/fixtures/extract/<lang>/`` is a small source tree of one
language; ``tests/fixtures/extract/golden/<lang>.jsonl`` is what
``iter_functions`` must produce for it, byte for byte. After a deliberate
change, regenerate and then review the diff line by line (qualified names,
lines, kept doc comments) before committing:

    .venv/bin/python tests/support/extract_golden.py
"""

from __future__ import annotations

import io
from pathlib import Path

from riido_pg.extract import LANGUAGES, ExtractStats, iter_functions, write_jsonl

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "extract"
GOLDEN = FIXTURES / "golden"
FIXTURE_LANGUAGES = tuple(sorted(LANGUAGES))


def render(lang: str) -> tuple[str, ExtractStats]:
    """The JSON Lines extracted from one language's fixture tree, and the stats."""
    stats = ExtractStats()
    out = io.StringIO()
    write_jsonl(iter_functions(FIXTURES / lang, langs=[lang], stats=stats), out)
    return out.getvalue(), stats


def regenerate() -> None:
    """Rewrite every golden file from the current code."""
    GOLDEN.mkdir(exist_ok=True)
    for lang in FIXTURE_LANGUAGES:
        text, stats = render(lang)
        (GOLDEN / f"{lang}.jsonl").write_text(text, encoding="utf-8", newline="\n")
        print(f"{lang}: {stats.describe()}")


if __name__ == "__main__":
    regenerate()
