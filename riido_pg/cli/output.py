"""Writing for people and programs: JSON on stdout, ``note:`` lines on stderr."""

from __future__ import annotations

import json
import sys

from riido_pg.api import visible

__all__ = ["emit_json", "note"]


def emit_json(obj: object) -> None:
    """One JSON document on stdout (JSON escapes control characters itself)."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def note(message: str) -> None:
    """A remark on stderr that is not an error (the command still succeeds); control
    characters in it are shown as escapes."""
    sys.stderr.write(f"note: {visible(message)}\n")
    sys.stderr.flush()
