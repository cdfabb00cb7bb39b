"""A question's targets: the parent snapshot's functions whose lines the commit touched.

For each :class:`~riido_pg.corpora.history.diffs.OldSide` (a parent-side file the
commit changed), the file is looked up in the parent's tree by the snapshot's own
rules (:class:`~riido_pg.extract.walk.PathFinder`: ignore files at the parent
revision, excludes, vendored folders, symlinks) and extracted exactly as the
snapshot extracts it (:func:`~riido_pg.extract.api.file_functions`, and the
functions a load leaves out as unindexable are left out here too), so every target
is a document of the snapshot. Then:

* a function's lines run from the first line of its document text (its leading
  comments, decorators or annotations) to its ``end_line``;
* each changed or deleted old line counts for the **innermost** function containing
  it (the one starting last; its enclosing function is not counted for that line);
* a pure insertion after old line ``a`` counts for the innermost function that
  contains both line ``a`` and line ``a + 1`` (the insertion lands inside it: new
  lines added just above a function's first line or just below its last are not in
  it);
* a function that is test, docs or example code (the shared path rules and a
  ``tests`` scope: :func:`~riido_pg.corpora.history.paths.is_test_or_doc`) is not a
  target (the lines it holds count for nothing), nor is one whose id holds a tab or
  a line break (it could not be written to ``qrels/test.tsv``).

A file whose blob is missing from the repository (a partial clone) raises
:class:`MissingObjects`: the question is skipped, since its snapshot could not be
extracted whole.
"""

from __future__ import annotations

from collections.abc import Iterable

from riido_pg.corpora.history.diffs import OldSide
from riido_pg.corpora.history.paths import is_test_or_doc
from riido_pg.extract.api import DEFAULT_MAX_FILE_BYTES, file_functions
from riido_pg.extract.indexable import unindexable
from riido_pg.extract.languages import language_of
from riido_pg.extract.model import Function
from riido_pg.extract.spans import Span, function_spans, touched
from riido_pg.extract.stats import ExtractStats
from riido_pg.extract.walk import PathFinder, Tree
from riido_pg.fields import is_test_document

__all__ = ["MissingObjects", "old_side_targets"]


class MissingObjects(Exception):
    """A blob the question needs is not in the repository."""


def _eligible(function: Function) -> bool:
    if is_test_or_doc(function.metadata["path"], function.metadata["qualname"]):
        return False
    if is_test_document(function.id, function.text):  # a test module, a test attribute
        return False
    return not any(c in function.id for c in "\t\r\n")


def old_side_targets(
    tree: Tree,
    finder: PathFinder,
    selected: frozenset[str],
    sides: Iterable[OldSide],
    limit: int,
) -> set[str]:
    """The target ids of a commit's old sides in the parent ``tree`` (the module
    docstring's rules); stops once more than ``limit`` are found."""
    targets: set[str] = set()
    documents: dict[str, bool] = {}  # by id: not left out of a load as unindexable

    def is_document(span: Span) -> bool:
        key = span.function.id
        if key not in documents:
            documents[key] = not unindexable(span.function.text)
        return documents[key]

    for side in sides:
        name = side.path.rsplit("/", 1)[-1]
        if not (side.lines or side.insertions) or language_of(name) not in selected:
            continue
        if is_test_or_doc(side.path):  # none of its functions could be a target
            continue
        entry = finder.find(tree, side.path)
        if entry is None:
            continue
        stats = ExtractStats()
        functions = file_functions(tree, entry, selected, DEFAULT_MAX_FILE_BYTES, stats)
        if stats.skipped_unreadable:
            raise MissingObjects(side.path)
        spans = function_spans(functions)
        for span in touched(spans, side.lines, side.insertions, is_document):
            if _eligible(span.function):
                targets.add(span.function.id)
                if len(targets) > limit:
                    return targets
    return targets
