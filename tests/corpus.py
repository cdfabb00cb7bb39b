"""Real source functions for tests: taken from the Python standard library with ast,
so tests need no network and no fixtures checked into the repo."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

from riido_pg.documents import Document

_MODULES = (
    "json/decoder.py",
    "json/encoder.py",
    "textwrap.py",
    "shlex.py",
    "csv.py",
    "configparser.py",
    "argparse.py",
    "string.py",
    "fnmatch.py",
    "glob.py",
)


def stdlib_functions(limit: int = 400) -> list[Document]:
    """Up to ``limit`` functions (with their docstrings) from a fixed set of modules."""
    root = Path(sysconfig.get_paths()["stdlib"])
    docs: list[Document] = []
    for rel in _MODULES:
        path = root / rel
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_source_segment(source, node)
                if text:
                    docs.append(Document(f"{rel}:{node.name}:{node.lineno}", text))
    docs.sort(key=lambda d: d.id)
    return docs[:limit]
