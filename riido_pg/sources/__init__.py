"""Where a snapshot's documents come from, and telling the kinds apart.

A source is a path or a :class:`Table`:

* a ``.json`` file: a request object whose ``documents`` are loaded;
* a ``.jsonl`` file: one ``{"id","text"}`` object per line;
* a BEIR directory (one holding ``corpus.jsonl``): its corpus, a title prepended;
* any other directory: a source tree, one document per function
  (:func:`riido_pg.extract.tree_documents`, as ``riido-pg extract`` reads it); with
  a git revision (:attr:`TreeOptions.rev`), any directory of a repository is the tree
  of that revision, read without a checkout;
* a :class:`Table`: rows of a table in the database, read inside the server
  (:func:`riido_pg.storage.load_snapshot_from_table`).

:func:`source_kind` decides which, :func:`open_source` opens a path as a stream of
checked documents. The file readers are :mod:`riido_pg.sources.files`. The
:class:`riido_pg.Database` façade and the CLI's ``load`` both go through here, so
they tell sources apart the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from riido_pg.documents import DocumentStream
from riido_pg.errors import ConflictingOptions, Hint, InvalidInput
from riido_pg.sources.files import beir_documents, json_documents, jsonl_documents, read_hints

if TYPE_CHECKING:
    from riido_pg.extract import ExtractStats

__all__ = [
    "Kind",
    "Table",
    "TreeOptions",
    "beir_documents",
    "json_documents",
    "jsonl_documents",
    "open_source",
    "read_hints",
    "source_kind",
]


class Kind(StrEnum):
    """The kinds of source a path can be."""

    JSON = "a .json request file"
    JSONL = "a .jsonl file"
    BEIR = "a BEIR directory"
    TREE = "a source tree"


@dataclass(frozen=True, slots=True)
class Table:
    """The rows of a table (``SCHEMA.TABLE``, or ``TABLE`` on the search path) in the
    database a load writes to, one document per row."""

    name: str
    id_column: str = "id"
    text_column: str = "text"


@dataclass(frozen=True, slots=True)
class TreeOptions:
    """How a source tree is read (``riido-pg extract``'s options)."""

    #: Only these languages (None: every supported one).
    langs: Sequence[str] | None = None
    #: gitignore-style patterns of paths to leave out.
    excludes: Sequence[str] = ()
    #: Also read vendored code (node_modules, vendor, minified files, ...).
    include_vendored: bool = False
    #: Leave out test code (:func:`riido_pg.extract.paths.is_test_path`).
    no_tests: bool = False
    #: Read the tree of this git revision of the repository at the path (a branch,
    #: tag or commit), without checking it out.
    rev: str | None = None
    #: With ``rev``: also store the revision's window of past commits (the input of
    #: ``structure_bm25``'s history-similarity prior); False leaves it out, and the
    #: first load of a long history then reads no past commit from git.
    window: bool = True

    @property
    def given(self) -> bool:
        return bool(
            self.langs
            or self.excludes
            or self.include_vendored
            or self.no_tests
            or self.rev is not None
            or not self.window
        )

    def check_source(self, what: str) -> None:
        """ConflictingOptions when an option is given for a source that is no tree
        (the one check of it, for every caller): ``what`` says what the source is
        instead (``d.jsonl is a JSONL file``)."""
        if self.given:
            raise ConflictingOptions(
                f"{what}, not a source tree",
                Hint(
                    "--lang, --exclude, --include-vendored, --no-tests, --rev and --no-window "
                    "apply to a source tree only",
                    "langs, excludes, include_vendored, no_tests, rev and window apply to a "
                    "source tree only",
                ),
            )


def source_kind(path: Path, *, rev: str | None = None) -> Kind:
    """What ``path`` is as a source, or InvalidInput saying what was expected. With
    ``rev`` a directory is a source tree (that revision's), whatever it holds now."""
    if path.is_dir() and rev is not None:
        return Kind.TREE
    if path.is_dir():
        return Kind.BEIR if (path / "corpus.jsonl").exists() else Kind.TREE
    if not path.exists():
        raise InvalidInput(f"{path}: no such file or directory")
    if path.suffix == ".jsonl":
        return Kind.JSONL
    if path.suffix == ".json":
        return Kind.JSON
    raise InvalidInput(
        f"{path}: expected a .json file, a .jsonl file, a BEIR directory or a source directory"
    )


def open_source(
    path: Path,
    *,
    snapshot_id: str | None = None,
    tree: TreeOptions | None = None,
    stats: ExtractStats | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> DocumentStream:
    """The documents at ``path``, read as they are consumed (a ``.json`` request is
    parsed now, whole). ``snapshot_id``: the id a ``.json`` file is loaded under (a
    file naming another is refused). ``tree``, ``stats`` and ``progress`` apply to a
    source tree (``stats`` counts what the extraction saw and left out). A git
    revision (``tree.rev``) is checked now: a directory in no repository, or a
    revision naming no commit, fails before anything is read."""
    options = tree or TreeOptions()
    kind = source_kind(path, rev=options.rev)
    if kind is not Kind.TREE:
        options.check_source(f"{path} is {kind}")
    if kind is Kind.JSON:
        return json_documents(path, snapshot_id=snapshot_id)
    if kind is Kind.JSONL:
        return jsonl_documents(path)
    if kind is Kind.BEIR:
        return beir_documents(path)
    from riido_pg.extract import tree_documents

    cache = None
    if options.rev is not None:
        from riido_pg import config
        from riido_pg.extract.gittree import open_revision
        from riido_pg.extract.stored_cache import StoredFileCache, stored_cache_path

        revision = open_revision(path, options.rev)  # checked now; the stream opens it again
        # what the last read of this repository parsed, kept under riido-pg's home
        cache = StoredFileCache(stored_cache_path(config.home(), revision.repository.git_dir))
    return tree_documents(
        path,
        langs=options.langs or None,
        excludes=options.excludes,
        include_vendored=options.include_vendored,
        no_tests=options.no_tests,
        stats=stats,
        progress=progress,
        rev=options.rev,
        cache=cache,
        window=options.window,
    )
