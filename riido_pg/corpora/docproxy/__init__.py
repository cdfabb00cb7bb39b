"""The pinned documentation-proxy evaluation corpus (README "Evaluation", ``corpus docproxy``).

Questions are docstring summaries, documents are the functions' code without their
docstrings: a proxy for "find the function that does X" over real library code.

Inputs: the source distributions (``.tar.gz`` sdists) of ``sqlalchemy==2.0.36``,
``rich==13.9.4`` and ``click==8.1.8``, each pinned by its public PyPI sha256 (see
``PINS``). They are fetched once into the cache directory (``$RIIDO_PG_HOME/cache/docproxy``,
else ``<user cache dir>/riido-pg/docproxy``) and reused from there without network.

Download: ``python -m pip download --no-deps --no-binary NAME --require-hashes`` with a
one-line requirements file ``NAME==VERSION --hash=sha256:...``, so pip itself refuses a
file with another hash before it touches it. pip cannot save an sdist without preparing
its metadata, so it also fetches the sdist's declared build backend (as wheels, into a
throwaway isolated environment) and runs its metadata hook; nothing is compiled and
nothing is installed into the user's environment. (The wheels hold the same package
sources and would need no such step, but the contract pins the source distributions.)
The user's pip configuration (index, proxy, certificates) applies. Every file is
checked against its pinned sha256 again before each use; a mismatch raises
:class:`~riido_pg.errors.InvalidCorpus`. A file can also be put into the cache
directory by hand under its pinned name.

Rules:

* Files: the ``.py`` files of the importable package only (``lib/sqlalchemy``, ``rich``,
  ``src/click`` inside the archive; examples, tools, docs and ``setup.py`` are not
  part of it), read straight from the archive. Test code is excluded by the one rule
  for test paths, :func:`riido_pg.extract.paths.is_test_path`; in these three packages
  it matches the ``sqlalchemy/testing/`` directory and nothing else (no ``test_*.py``,
  ``*_test.py`` or ``conftest.py`` file lies outside it). A file that does not decode
  or parse (with :mod:`ast`) is skipped.
* Documents: every ``def`` and ``async def`` (methods and nested functions included)
  whose body begins with a string literal (its docstring). ``_id`` is
  ``REPO:PATH:QUALNAME:LINE`` where PATH is the import path of the file
  (``sqlalchemy/orm/session.py``), QUALNAME is Python's ``__qualname__``
  (``Session.add``, ``outer.<locals>.inner``) and LINE is the ``def`` line;
  ``metadata.repo`` is REPO. There is no ``title``: a document is the function's
  source and nothing else (BEIR readers prepend a title).
* Document text: the source lines from the first decorator (decorators are included)
  to the function's last line, with the docstring's lines removed, and also the
  docstrings of the functions nested in it (they are questions of their own and would
  otherwise leak into their parent). Lines are dedented by the indentation of the
  first line; everything else is kept byte for byte (newlines normalized to ``\\n``).
  A docstring sharing a line with other code loses only its own characters.
* Questions: the docstring's first paragraph (after :func:`inspect.cleandoc`, up to the
  first blank line), whitespace folded to single spaces, kept only with at least three
  words. Its targets are all functions *of the same repository* with that exact text,
  so every question has one ``metadata.repo``. ``_id`` is
  ``q-REPO-<first 12 hex digits of sha256(text)>``. A function whose summary is too
  short is still a document, just not a target.
* Output: ``corpus.jsonl`` ordered by (repo, path, line), ``queries.jsonl`` by ``_id``,
  ``qrels/test.tsv`` by query then document; JSON with sorted keys, UTF-8, ``\\n``
  line ends. Same inputs, byte-identical output.

Modules: ``pins`` (the pins, the cache, the download, the package's files in an
archive), ``functions`` (the extractor), ``beir`` (assembling and writing the files).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from riido_pg.corpora.docproxy.beir import (
    BeirFiles,
    DocproxyStats,
    assemble,
    question_id,
    write_beir,
)
from riido_pg.corpora.docproxy.functions import (
    MIN_QUESTION_WORDS,
    FunctionRecord,
    documented_functions,
    summary_of,
)
from riido_pg.corpora.docproxy.pins import (
    PINS,
    Pin,
    default_cache_dir,
    fetch,
    package_sources,
)
from riido_pg.errors import DownloadFailed
from riido_pg.extract.paths import is_test_path

__all__ = [
    "MIN_QUESTION_WORDS",
    "PINS",
    "BeirFiles",
    "DocproxyStats",
    "DownloadFailed",
    "FunctionRecord",
    "Pin",
    "assemble",
    "build_docproxy",
    "default_cache_dir",
    "documented_functions",
    "fetch",
    "is_test_path",
    "package_sources",
    "question_id",
    "records_of",
    "summary_of",
    "write_beir",
]


def records_of(pin: Pin, archive: Path) -> list[FunctionRecord]:
    """Every function record of one verified sdist, ordered by path and line."""
    records: list[FunctionRecord] = []
    for path, source in sorted(package_sources(pin, archive).items()):
        records.extend(documented_functions(source, repo=pin.repo, path=path))
    return records


def build_docproxy(
    out_dir: Path,
    *,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> DocproxyStats:
    """Build the documentation-proxy corpus as a BEIR directory in ``out_dir``.

    Downloads the pinned sdists into ``cache_dir`` (default :func:`default_cache_dir`)
    unless they are there already. Raises :class:`DownloadFailed` when a file is
    missing and cannot be fetched, :class:`~riido_pg.errors.InvalidCorpus` when a file
    does not have its pinned sha256. Nothing is written before everything is computed.
    """
    report = progress or (lambda _message: None)
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    started = time.monotonic()
    records: list[FunctionRecord] = []
    for pin in PINS:
        archive = fetch(pin, cache, report)
        found = records_of(pin, archive)
        report(f"extracted {len(found)} functions from {pin.requirement}")
        records.extend(found)
    files = assemble(records)
    write_beir(out_dir, files)
    report(f"built in {time.monotonic() - started:.1f} s")
    return files.stats
