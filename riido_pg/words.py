"""Counting words for messages: ``count(1, "document")`` is "1 document"."""

from __future__ import annotations

__all__ = ["count"]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, made plural unless ``n`` is 1 (``plural`` for irregular ones)."""
    word = noun if n == 1 else (plural or f"{noun}s")
    return f"{n} {word}"
