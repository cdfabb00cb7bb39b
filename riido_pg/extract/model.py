"""The extracted document: one function, and its JSON Lines form."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO, TypedDict

__all__ = ["Function", "FunctionMetadata", "write_jsonl"]


class FunctionMetadata(TypedDict):
    """What a document says about its function.

    ``start_line`` is the 1-based line of the function's name (the line in the
    id); ``end_line`` the last line of the definition. The text may begin
    above ``start_line`` with a doc comment, decorators or attributes.
    """

    language: str
    path: str
    qualname: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Function:
    """One function or method: ``id`` is ``PATH:QUALNAME:LINE``."""

    id: str
    text: str
    metadata: FunctionMetadata

    def to_json_line(self) -> str:
        """Compact JSON with sorted keys, non-ASCII kept as is, no newline."""
        obj = {"id": self.id, "text": self.text, "metadata": self.metadata}
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(functions: Iterable[Function], fh: TextIO) -> int:
    """Write one JSON line per function to ``fh``; return how many."""
    count = 0
    for function in functions:
        fh.write(function.to_json_line())
        fh.write("\n")
        count += 1
    return count
