"""The documents of a history corpus's snapshots, read from its repository.

A snapshot is the tree of one commit, extracted as ``riido-pg load ID REPO --rev
COMMIT`` would with the corpus's ``--lang`` and ``--exclude``
(:func:`~riido_pg.extract.documents.tree_documents`); nothing of it is stored in the
corpus directory. The repository's ``info/exclude`` applies to it as to any
``--rev`` read, so the lines in force must be the ones the corpus recorded: when
they changed since, the snapshot could hold other documents than the targets were
computed on, and :func:`snapshot_documents` refuses (rebuild the corpus, or put the
file back).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from riido_pg.corpora.history.corpus import HistoryCorpus
from riido_pg.documents import DocumentStream
from riido_pg.errors import InvalidCorpus, InvalidInput
from riido_pg.extract.cache import FileCache
from riido_pg.extract.documents import tree_documents
from riido_pg.extract.git import NotARepository, Repository, open_repository
from riido_pg.extract.ignore import GIT_INFO_EXCLUDE
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import read_ignore_file

__all__ = ["info_exclude_lines", "open_top", "snapshot_documents"]


def open_top(path: Path) -> Repository:
    """The repository at ``path``, which must be its work tree's top or the
    repository itself (a subdirectory would make a corpus of part of each tree), and
    not a partial clone."""
    repository = open_repository(path)
    repository.check_complete()
    if repository.prefix:
        raise NotARepository(
            f"{path}: a directory inside the repository at {repository.top}; give its top level"
        )
    return repository


def info_exclude_lines(repository: Repository) -> tuple[str, ...]:
    """The patterns of the repository's ``info/exclude`` (blank and comment lines
    left out), as a ``--rev`` read of it applies them now."""
    stats = ExtractStats()
    rel = "/".join(GIT_INFO_EXCLUDE)
    lines = read_ignore_file(str(repository.info_exclude), rel, stats)
    if stats.problems:
        raise InvalidInput(f"{repository.info_exclude}: {stats.problems[0][1]}")
    return tuple(line for line in lines if line.strip() and not line.startswith("#"))


def snapshot_documents(
    corpus: HistoryCorpus,
    snapshot_id: str,
    *,
    stats: ExtractStats | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    cache: FileCache | None = None,
) -> DocumentStream:
    """The documents of one snapshot of ``corpus``, streamed from its repository (for
    ``load_snapshot(conn, snapshot_id, snapshot_documents(corpus, snapshot_id))``).

    Checked now: the snapshot must be the corpus's, the repository must hold its
    commit, and its ``info/exclude`` must be the one the corpus recorded. One
    ``cache`` passed to the reads of several snapshots parses each file once."""
    if snapshot_id not in corpus.snapshots:
        raise InvalidInput(f"{corpus.path}: no snapshot {snapshot_id!r} in this corpus")
    repository = open_top(corpus.repository)
    commit = repository.commit(corpus.snapshots[snapshot_id])
    if info_exclude_lines(repository) != corpus.extraction.info_exclude:
        raise InvalidCorpus(
            f"{repository.info_exclude}: changed since the corpus at {corpus.path} was "
            "built; restore it or rebuild the corpus"
        )
    langs = corpus.extraction.langs
    return tree_documents(
        repository.path,
        langs=list(langs) if langs is not None else None,
        excludes=list(corpus.extraction.excludes),
        no_tests=corpus.extraction.no_tests,
        stats=stats,
        progress=progress,
        rev=commit,
        cache=cache,
    )
