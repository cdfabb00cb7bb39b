"""What marks a directory as a history corpus, importable without the history
corpus builder (:mod:`riido_pg.corpora.history`): ``eval`` asks it of every
directory, a BEIR one included."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MANIFEST_FILE", "is_history_corpus"]

MANIFEST_FILE = "history.json"


def is_history_corpus(directory: Path) -> bool:
    """Whether ``directory`` is meant as a history corpus (it has ``history.json``);
    :func:`riido_pg.corpora.history.read_history_corpus` then says whether it is a
    valid one."""
    return (directory / MANIFEST_FILE).is_file()
