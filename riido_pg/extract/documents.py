"""A source tree as the documents of a snapshot (``riido-pg load ID DIR``).

The extracted functions become :class:`~riido_pg.documents.Document`s (id and text;
the metadata stays with ``riido-pg extract``'s JSON Lines), checked like any other
input. A tree with no function in a supported language is an error that says what
was found.

A function PostgreSQL cannot index — one with a run of more than 2,047 bytes without
whitespace, which can hold a word the text search parser would drop with an error
(generated tables, minified code, embedded data) — is left out of the load, counted
and listed in the stats, rather than failing the whole tree as such a document in a
file of documents would: a tree is what the caller has, not what they chose.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from riido_pg.documents import Document, DocumentStream
from riido_pg.errors import InvalidInput
from riido_pg.extract.api import iter_functions
from riido_pg.extract.cache import FileCache
from riido_pg.extract.indexable import unindexable
from riido_pg.extract.recent import RecentLines, recent_lines
from riido_pg.extract.similar import RevisionWindow
from riido_pg.extract.stats import ExtractStats

__all__ = ["tree_documents", "unindexable"]


def tree_documents(
    root: Path,
    *,
    langs: Sequence[str] | None = None,
    excludes: Sequence[str] = (),
    include_vendored: bool = False,
    no_tests: bool = False,
    stats: ExtractStats | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    rev: str | None = None,
    cache: FileCache | None = None,
    window: bool = True,
) -> DocumentStream:
    """The functions under ``root`` as checked documents, extracted as they are
    consumed (a load streams them). ``progress`` gets ("files", files seen, 0) and
    ("functions", functions, 0) as the walk advances; the stream raises InvalidInput
    at its end when the tree held no function in a supported language. ``rev``: the
    tree of that git revision, and ``cache`` the files parsed at other revisions
    (``iter_functions``); with ``rev``, ``window`` says whether the load stores the
    revision's window of past commits (:class:`~riido_pg.extract.similar.RevisionWindow`)."""
    counts = stats if stats is not None else ExtractStats()

    def on_file(_rel: str) -> None:
        if progress is not None:
            progress("files", counts.files_seen, 0)

    def functions() -> Iterator[Document]:
        try:
            yield from documents()
        finally:
            if cache is not None:
                cache.close()  # a walk stopped early: what it began to keep is let go

    recent: list[RecentLines] = []

    def documents() -> Iterator[Document]:
        n = 0
        recent[:] = [recent_lines(root, rev)] if rev is not None else []
        for function in iter_functions(
            root,
            langs=langs,
            excludes=excludes,
            include_vendored=include_vendored,
            no_tests=no_tests,
            stats=counts,
            on_file=on_file,
            rev=rev,
            cache=cache,
        ):
            if unindexable(function.text):
                counts.skipped_unindexable += 1
                counts.unindexable_ids.append(function.id)
                counts.problem(
                    function.metadata["path"], f"{function.id}: a word too long to index"
                )
                continue
            for lines in recent:
                lines.see(function)
            yield Document(function.id, function.text)
            n += 1
            if progress is not None and n % 100 == 0:
                progress("functions", n, 0)
        if cache is not None:
            cache.flush()
        if progress is not None:
            progress("files", counts.files_seen, counts.files_seen)
            progress("functions", n, n)
        if not n:
            raise InvalidInput(counts.no_functions(root))

    def unindexed(doc_id: str, reason: str) -> None:
        counts.skipped_unindexable += 1
        counts.unindexable_ids.append(doc_id)
        counts.problem(
            doc_id.rsplit(":", 2)[0], f"{doc_id}: {reason}, which PostgreSQL cannot index"
        )

    def recent_ids() -> frozenset[str]:
        return recent[0].ids() if recent else frozenset()

    return DocumentStream(
        functions,
        where=str(root),
        skip_unindexable=unindexed,
        recent=recent_ids if rev is not None else None,
        history=RevisionWindow(root, rev) if rev is not None and window else None,
    )
