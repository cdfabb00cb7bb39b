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
  part of it), read straight from the archive. Test code is excluded: a directory named
  ``test``, ``tests`` or ``testing`` anywhere in the path (so ``sqlalchemy/testing/``),
  or a file named ``test_*.py``, ``*_test.py`` or ``conftest.py``. A file that does
  not decode or parse (with :mod:`ast`) is skipped.
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
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypeAlias

import platformdirs

from riido_pg.errors import DownloadFailed, InvalidCorpus
from riido_pg.files import output_dir, write_output

__all__ = [
    "PINS",
    "BeirFiles",
    "DocproxyStats",
    "FunctionRecord",
    "Pin",
    "assemble",
    "build_docproxy",
    "default_cache_dir",
    "extract_functions",
    "fetch",
    "is_test_path",
    "question_id",
    "records_of",
    "summary_of",
    "write_beir",
]

MIN_QUESTION_WORDS = 3


@dataclass(frozen=True)
class Pin:
    """One pinned source distribution."""

    repo: str  # metadata.repo of its documents and questions
    name: str
    version: str
    filename: str
    sha256: str
    package_dir: str  # the importable package, relative to the archive's top directory

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


PINS: tuple[Pin, ...] = (
    Pin(
        "click",
        "click",
        "8.1.8",
        "click-8.1.8.tar.gz",
        "ed53c9d8990d83c2a27deae68e4ee337473f6330c040a31d4225c9574d16096a",
        "src/click",
    ),
    Pin(
        "rich",
        "rich",
        "13.9.4",
        "rich-13.9.4.tar.gz",
        "439594978a49a09530cff7ebc4b5c7103ef57baf48d5ea3184f21d9a2befa098",
        "rich",
    ),
    Pin(
        "sqlalchemy",
        "sqlalchemy",
        "2.0.36",
        "sqlalchemy-2.0.36.tar.gz",
        "7f2767680b6d2398aea7082e45a774b2b0767b5c8d8ffb9c8b683088ea9b29c5",
        "lib/sqlalchemy",
    ),
)


@dataclass(frozen=True)
class DocproxyStats:
    """What :func:`build_docproxy` wrote."""

    documents: int
    questions: int
    qrels: int
    documents_per_repo: dict[str, int] = field(default_factory=dict)
    questions_per_repo: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FunctionRecord:
    """One function with a docstring: a document, and maybe a question's target."""

    repo: str
    path: str
    qualname: str
    lineno: int
    text: str
    summary: str | None  # the question text, None when shorter than three words

    @property
    def doc_id(self) -> str:
        return f"{self.repo}:{self.path}:{self.qualname}:{self.lineno}"


@dataclass(frozen=True)
class BeirFiles:
    """The three files of a BEIR directory, rendered."""

    corpus: bytes
    queries: bytes
    qrels: bytes
    stats: DocproxyStats


# --- cache and download -------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$RIIDO_PG_HOME/cache/docproxy``, else the user cache dir's ``riido-pg/docproxy``."""
    env = os.environ.get("RIIDO_PG_HOME")
    if env:
        return Path(env).expanduser().resolve() / "cache" / "docproxy"
    return Path(platformdirs.user_cache_dir("riido-pg")).resolve() / "docproxy"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(pin: Pin, path: Path) -> None:
    actual = _sha256_file(path)
    if actual != pin.sha256:
        raise InvalidCorpus(
            f"{path} has sha256 {actual}, but {pin.requirement} is pinned to {pin.sha256}; "
            "delete the file to download it again"
        )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _run_pip(pin: Pin, dest: Path) -> None:
    requirements = dest / "requirements.txt"
    requirements.write_text(f"{pin.requirement} --hash=sha256:{pin.sha256}\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "pip", "download",
        "--no-deps", "--no-binary", pin.name, "--require-hashes",
        "--no-input", "--disable-pip-version-check", "--progress-bar", "off",
        "-r", str(requirements), "-d", str(dest),
    ]  # fmt: skip
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise _download_error(pin, dest.parent, str(exc)) from exc
    if proc.returncode == 0:
        return
    output = proc.stdout + "\n" + proc.stderr
    if "DO NOT MATCH THE HASHES" in output:
        raise InvalidCorpus(
            f"the index served a {pin.requirement} sdist whose sha256 is not the pinned "
            f"{pin.sha256}; check the pip index settings"
        )
    raise _download_error(pin, dest.parent, _last_line(output))


def _download_error(pin: Pin, cache_dir: Path, reason: str) -> DownloadFailed:
    return DownloadFailed(
        f"cannot download {pin.requirement}: {reason}; check the network and the pip index "
        f"settings, or put {pin.filename} (sha256 {pin.sha256}) into {cache_dir}"
    )


def _download(pin: Pin, cache_dir: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".download-") as tmp:
        dest = Path(tmp)
        _run_pip(pin, dest)
        saved = sorted(p for p in dest.iterdir() if p.name.endswith(".tar.gz"))
        if len(saved) != 1:
            raise _download_error(pin, cache_dir, "pip saved no sdist")
        _verify(pin, saved[0])
        os.replace(saved[0], target)


def fetch(pin: Pin, cache_dir: Path, progress: Callable[[str], None]) -> Path:
    """The verified sdist of ``pin`` in ``cache_dir``, downloaded first if missing."""
    target = cache_dir / pin.filename
    if target.is_file():
        progress(f"using cached {pin.filename}")
    else:
        progress(f"downloading {pin.requirement}")
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DownloadFailed(
                f"cannot create the cache directory {cache_dir}: {exc.strerror}; "
                "set RIIDO_PG_HOME to a writable directory"
            ) from exc
        _download(pin, cache_dir, target)
    _verify(pin, target)
    return target


# --- extraction ---------------------------------------------------------------------

_TEST_DIRS = frozenset({"test", "tests", "testing"})


def is_test_path(path: str) -> bool:
    """True for test code: a ``test``/``tests``/``testing`` directory, or a file named
    ``test_*.py``, ``*_test.py`` or ``conftest.py``."""
    parts = PurePosixPath(path).parts
    if any(part in _TEST_DIRS for part in parts[:-1]):
        return True
    name = parts[-1] if parts else ""
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def summary_of(docstring: str) -> str | None:
    """The question for a docstring: its first paragraph, whitespace folded, or None
    when that has fewer than three words."""
    paragraph: list[str] = []
    for line in inspect.cleandoc(docstring).split("\n"):
        if not line.strip():
            break
        paragraph.append(line)
    words = " ".join(paragraph).split()
    if len(words) < MIN_QUESTION_WORDS:
        return None
    text = " ".join(words)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from an escape: not writable as UTF-8
        return None
    return text


_FunctionNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef


def _docstring_node(node: _FunctionNode) -> ast.Expr | None:
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _walk_functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, _FunctionNode]]:
    """Every function under ``node`` with its ``__qualname__``, in source order."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _FunctionNode):
            qualname = prefix + child.name
            yield qualname, child
            yield from _walk_functions(child, qualname + ".<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _walk_functions(child, prefix + child.name + ".")
        else:
            yield from _walk_functions(child, prefix)


def _char_col(line: str, byte_col: int) -> int:
    """``ast`` columns are UTF-8 byte offsets; this is the character offset."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _remove_span(lines: dict[int, str], expr: ast.Expr) -> None:
    """Remove one docstring from ``lines`` (1-based line number -> text, edited in place)."""
    first, last = expr.lineno, expr.end_lineno or expr.lineno
    start = _char_col(lines[first], expr.col_offset)
    end = _char_col(lines[last], expr.end_col_offset or 0)
    before, after = lines[first][:start], lines[last][end:]
    for number in range(first, last + 1):
        del lines[number]
    if not before.strip() and (not after.strip() or after.lstrip().startswith("#")):
        return  # the docstring had its lines to itself: they go entirely
    lines[first] = before + after if after.strip() else before.rstrip()


def _dedent(lines: Iterable[str], indent: str) -> list[str]:
    return [line[len(indent) :] if line.startswith(indent) else line for line in lines]


def _function_text(source_lines: list[str], node: _FunctionNode) -> str:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    last = node.end_lineno or node.lineno
    lines = {n: source_lines[n - 1] for n in range(first, last + 1)}
    for inner in ast.walk(node):
        if isinstance(inner, _FunctionNode):
            doc = _docstring_node(inner)
            if doc is not None:
                _remove_span(lines, doc)
    head = source_lines[first - 1]
    indent = head[: len(head) - len(head.lstrip())]
    return "\n".join(_dedent((lines[n] for n in sorted(lines)), indent))


def _decode(source: bytes | str) -> str:
    if isinstance(source, str):
        return source.replace("\r\n", "\n").replace("\r", "\n")
    return importlib.util.decode_source(source)  # PEP 263 cookie, universal newlines


def extract_functions(source: bytes | str, *, repo: str, path: str) -> list[FunctionRecord]:
    """The functions with a docstring in one file, in source order; [] when it does not
    decode or parse."""
    try:
        text = _decode(source)
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return []
    source_lines = text.split("\n")  # ast counts only \n; str.splitlines would split on \f
    records = []
    for qualname, node in _walk_functions(tree):
        doc = _docstring_node(node)
        if doc is None:
            continue
        assert isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
        records.append(
            FunctionRecord(
                repo=repo,
                path=path,
                qualname=qualname,
                lineno=node.lineno,
                text=_function_text(source_lines, node),
                summary=summary_of(doc.value.value),
            )
        )
    return sorted(records, key=lambda r: (r.lineno, r.qualname))


def _package_sources(pin: Pin, archive: Path) -> dict[str, bytes]:
    """Import path (``click/core.py``) -> bytes of every non-test ``.py`` file of the package."""
    top = pin.filename.removesuffix(".tar.gz")
    package = PurePosixPath(top, pin.package_dir)
    sources: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            member_path = PurePosixPath(member.name)
            if not member.isfile() or member_path.suffix != ".py":
                continue
            if not member_path.is_relative_to(package):
                continue
            path = member_path.relative_to(package.parent).as_posix()
            if is_test_path(path):
                continue
            fh = tar.extractfile(member)
            if fh is not None:
                sources[path] = fh.read()
    return sources


def records_of(pin: Pin, archive: Path) -> list[FunctionRecord]:
    """Every function record of one verified sdist, ordered by path and line."""
    records: list[FunctionRecord] = []
    for path, source in sorted(_package_sources(pin, archive).items()):
        records.extend(extract_functions(source, repo=pin.repo, path=path))
    return records


# --- assembly and output ------------------------------------------------------------


def _json_line(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


def _document_json(record: FunctionRecord) -> dict[str, object]:
    return {
        "_id": record.doc_id,
        "text": record.text,
        "metadata": {"repo": record.repo},
    }


def question_id(repo: str, text: str) -> str:
    """``q-REPO-`` and the first 12 hex digits of the text's sha256."""
    return f"q-{repo}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"


def assemble(records: Iterable[FunctionRecord]) -> BeirFiles:
    """Render documents, questions (grouped per repo by summary) and qrels."""
    docs = sorted(records, key=lambda r: (r.repo, r.path, r.lineno, r.qualname))
    doc_ids = [r.doc_id for r in docs]
    if len(set(doc_ids)) != len(doc_ids):
        raise InvalidCorpus("docproxy: two functions share a document id")
    targets: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in docs:
        if record.summary is not None:
            targets[(record.repo, record.summary)].append(record.doc_id)
    questions = sorted(
        (question_id(repo, text), repo, text, ids) for (repo, text), ids in targets.items()
    )
    if len({q[0] for q in questions}) != len(questions):
        raise InvalidCorpus("docproxy: two questions share an id (sha256 prefix collision)")
    corpus = "".join(_json_line(_document_json(record)) for record in docs)
    queries = "".join(
        _json_line({"_id": qid, "text": text, "metadata": {"repo": repo}})
        for qid, repo, text, _ in questions
    )
    qrel_lines = [f"{qid}\t{doc_id}\t1\n" for qid, _, _, ids in questions for doc_id in ids]
    per_repo_docs: dict[str, int] = defaultdict(int)
    per_repo_questions: dict[str, int] = defaultdict(int)
    for record in docs:
        per_repo_docs[record.repo] += 1
    for _, repo, _, _ in questions:
        per_repo_questions[repo] += 1
    stats = DocproxyStats(
        documents=len(docs),
        questions=len(questions),
        qrels=len(qrel_lines),
        documents_per_repo=dict(sorted(per_repo_docs.items())),
        questions_per_repo=dict(sorted(per_repo_questions.items())),
    )
    qrels = "query-id\tcorpus-id\tscore\n" + "".join(qrel_lines)
    return BeirFiles(corpus.encode(), queries.encode(), qrels.encode(), stats)


def write_beir(out_dir: Path, files: BeirFiles) -> None:
    """Write the three files, each replaced whole (``out_dir`` is created if missing;
    its parent must exist)."""
    output_dir(out_dir)
    output_dir(out_dir / "qrels")
    write_output(out_dir / "corpus.jsonl", files.corpus)
    write_output(out_dir / "queries.jsonl", files.queries)
    write_output(out_dir / "qrels" / "test.tsv", files.qrels)


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
