"""The history corpus directory: its files, writing them and reading them back.

A directory written by ``riido-pg corpus history`` holds three files:

* ``history.json``, the manifest (what makes the directory a history corpus):
  ``format`` (``"riido-pg history corpus"``), ``format_version`` (1),
  ``rules_version`` (:data:`~riido_pg.corpora.history.subjects.RULES_VERSION`),
  ``repository`` (``path``: the repository, resolved; ``name``: the label in ids),
  ``range`` (``until``/``since`` as given and the commits they named), ``options``
  (``max``, ``max_targets``), ``extraction`` (``lang``, ``exclude``,
  ``info_exclude``: the repository's ``info/exclude`` lines in force when it was
  built; ``no_tests``: true, only when built with ``--no-tests``; ``digest``: null
  for the defaults), ``counts`` (``commits`` read,
  ``questions``, ``targets``, ``snapshots``, ``skipped`` by reason: ``questions``
  plus every skipped count is ``commits``), ``files`` (the sha256 of the two other
  files) and ``snapshots`` (snapshot id → the full id of its commit);
* ``queries.jsonl``, one question a line, newest commit first: ``_id``
  (``q-<name>-<12 hex of the commit>``), ``text`` (the cleaned subject) and
  ``metadata``: ``repo``, ``snapshot``, ``commit``, ``parent``, ``author_date``
  (strict ISO 8601, the author's zone), ``subject`` (as written);
* ``qrels/test.tsv``: the header ``query-id<TAB>corpus-id<TAB>score``, then one line
  per target, ``<question id><TAB><function id in that question's snapshot><TAB>1``,
  in question order, then target id order.

``queries.jsonl`` and ``qrels/test.tsv`` are BEIR's; there is no ``corpus.jsonl``
(it would have to hold every snapshot): the documents of snapshot ``S`` are the tree
of ``snapshots[S]`` in the repository, extracted as ``riido-pg load S REPO --rev
COMMIT`` with ``extraction``'s ``--lang``/``--exclude``/``--no-tests``
(:func:`~riido_pg.corpora.history.snapshots.snapshot_documents`). A snapshot id is
``<name>@<12 hex of the commit>``, with ``-<digest>`` (8 hex) appended when the
extraction options are not the defaults.

JSON is UTF-8 with sorted keys (``history.json`` indented, lines compact), lines end
in ``\\n``; nothing depends on the clock, so the same repository and arguments give
the same bytes. Reading (:func:`read_history_corpus`) checks everything and names the
file (and line) of any problem: a missing file, a digest that does not match (a
changed or half-written directory), a malformed line, an unknown snapshot or
question, a question without targets.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from riido_pg.corpora.manifest import MANIFEST_FILE, is_history_corpus
from riido_pg.errors import InvalidCorpus
from riido_pg.jsontext import read_json

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "QRELS_FILE",
    "QUERIES_FILE",
    "Extraction",
    "HistoryCorpus",
    "HistoryQuestion",
    "is_history_corpus",
    "read_history_corpus",
    "render_corpus",
]

FORMAT = "riido-pg history corpus"
FORMAT_VERSION = 1
QUERIES_FILE = "queries.jsonl"
QRELS_FILE = "qrels/test.tsv"
_QRELS_HEADER = "query-id\tcorpus-id\tscore\n"
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Extraction:
    """How every snapshot of a corpus is extracted (``--lang``, ``--exclude``,
    ``--no-tests``) and the repository's ``info/exclude`` lines in force."""

    langs: tuple[str, ...] | None = None
    excludes: tuple[str, ...] = ()
    info_exclude: tuple[str, ...] = ()
    #: Leave out test code (test paths, and test functions in other files).
    no_tests: bool = False

    @property
    def digest(self) -> str | None:
        """8 hex digits naming the options, or None for the defaults."""
        if self.langs is None and not self.excludes and not self.info_exclude and not self.no_tests:
            return None
        text = json.dumps(self._fields(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]

    def _fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "exclude": list(self.excludes),
            "info_exclude": list(self.info_exclude),
            "lang": list(self.langs) if self.langs is not None else None,
        }
        if self.no_tests:  # absent when false: the digests of earlier corpora stand
            fields["no_tests"] = True
        return fields

    def to_json(self) -> dict[str, Any]:
        return {**self._fields(), "digest": self.digest}

    def snapshot_id(self, name: str, commit: str) -> str:
        """The snapshot id of ``commit``'s tree under these options."""
        digest = self.digest
        return f"{name}@{commit[:12]}" + (f"-{digest}" if digest else "")


@dataclass(frozen=True)
class HistoryQuestion:
    """One question: a commit's cleaned subject, ranked in its parent's snapshot."""

    id: str
    text: str
    repo: str
    snapshot_id: str
    commit: str
    parent: str
    author_date: str
    subject: str
    #: Function ids of the snapshot, sorted.
    targets: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        meta = {
            "author_date": self.author_date,
            "commit": self.commit,
            "parent": self.parent,
            "repo": self.repo,
            "snapshot": self.snapshot_id,
            "subject": self.subject,
        }
        return {"_id": self.id, "metadata": meta, "text": self.text}


@dataclass(frozen=True)
class HistoryCorpus:
    """A history corpus read back (see the module docstring)."""

    path: Path
    manifest: dict[str, Any]
    #: The repository the snapshots are read from.
    repository: Path
    name: str
    extraction: Extraction
    questions: list[HistoryQuestion]
    #: Snapshot id → the full id of the commit whose tree it is, in question order.
    snapshots: dict[str, str]
    #: The sha256 of ``history.json`` (which holds the other files' digests).
    sha256: str = ""

    @property
    def skipped(self) -> dict[str, int]:
        """Commits that gave no question, by reason."""
        return dict(self.manifest["counts"]["skipped"])

    def questions_of(self, snapshot_id: str) -> list[HistoryQuestion]:
        """The questions ranked in one snapshot, in corpus order."""
        return [q for q in self.questions if q.snapshot_id == snapshot_id]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_corpus(manifest: dict[str, Any], questions: list[HistoryQuestion]) -> dict[str, bytes]:
    """The bytes of each file (by relative path); ``manifest`` gets ``files`` and
    ``snapshots`` filled in from the questions."""
    queries = "".join(
        json.dumps(q.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        for q in questions
    ).encode("utf-8")
    qrels = (
        _QRELS_HEADER + "".join(f"{q.id}\t{t}\t1\n" for q in questions for t in q.targets)
    ).encode("utf-8")
    snapshots: dict[str, str] = {}
    for q in questions:
        snapshots.setdefault(q.snapshot_id, q.parent)
    full = {
        **manifest,
        "files": {QUERIES_FILE: _sha256(queries), QRELS_FILE: _sha256(qrels)},
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "snapshots": snapshots,
    }
    text = json.dumps(full, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
    return {MANIFEST_FILE: text.encode("utf-8"), QUERIES_FILE: queries, QRELS_FILE: qrels}


def _read(directory: Path, name: str) -> bytes:
    path = directory / name
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InvalidCorpus(f"{path}: missing; a history corpus needs it") from None
    except OSError as exc:
        raise InvalidCorpus(f"{path}: cannot read: {(exc.strerror or '').lower()}") from exc


def _get(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj or not isinstance(obj[key], kind):
        raise InvalidCorpus(f"{where}: {key!r} is missing or malformed")
    return obj[key]


def _commit_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) not in (40, 64) or not set(value) <= _HEX:
        raise InvalidCorpus(f"{where}: {value!r} is not a full commit id")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidCorpus(f"{where}: expected a list of strings")
    return tuple(value)


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidCorpus(f"{where}: expected true or false")
    return value


def _manifest(directory: Path) -> tuple[dict[str, Any], Extraction, str]:
    where = str(directory / MANIFEST_FILE)
    raw = _read(directory, MANIFEST_FILE)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidCorpus(f"{where}: invalid UTF-8 (byte {exc.start})") from exc
    manifest = read_json(text, where, error=InvalidCorpus)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidCorpus(f"{where}: not a history corpus manifest")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise InvalidCorpus(
            f"{where}: format_version {version!r}; this riido-pg reads {FORMAT_VERSION}"
        )
    for key in ("repository", "extraction", "counts", "files", "snapshots", "options"):
        _get(manifest, key, dict, where)
    _get(manifest["repository"], "path", str, where)
    _get(manifest["repository"], "name", str, where)
    _get(manifest["counts"], "skipped", dict, where)
    ext = manifest["extraction"]
    langs = ext.get("lang")
    extraction = Extraction(
        langs=None if langs is None else _strings(langs, f"{where}: extraction.lang"),
        excludes=_strings(ext.get("exclude"), f"{where}: extraction.exclude"),
        info_exclude=_strings(ext.get("info_exclude"), f"{where}: extraction.info_exclude"),
        no_tests=_flag(ext.get("no_tests", False), f"{where}: extraction.no_tests"),
    )
    if ext.get("digest") != extraction.digest:
        raise InvalidCorpus(f"{where}: extraction.digest does not match its options")
    for sid, commit in manifest["snapshots"].items():
        _commit_id(commit, f"{where}: snapshot {sid}")
    return manifest, extraction, _sha256(raw)


def _lines(directory: Path, name: str, data: bytes) -> list[tuple[str, str]]:
    """``(where, line)`` of each line of a file, checked against the manifest digest."""
    path = directory / name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidCorpus(f"{path}: invalid UTF-8 (byte {exc.start})") from exc
    if not text:
        return []  # an empty file has no line (a corpus without questions says so)
    if not text.endswith("\n"):
        raise InvalidCorpus(f"{path}: truncated (no final newline)")
    return [(f"{path}: line {n}", line) for n, line in enumerate(text[:-1].split("\n"), 1)]


def _question(where: str, line: str, snapshots: dict[str, str]) -> HistoryQuestion:
    obj = read_json(line, where, error=InvalidCorpus, one_line=True)
    meta = _get(obj, "metadata", dict, where)
    snapshot = _get(meta, "snapshot", str, where)
    if snapshot not in snapshots:
        raise InvalidCorpus(f"{where}: snapshot {snapshot!r} is not in {MANIFEST_FILE}")
    return HistoryQuestion(
        id=_get(obj, "_id", str, where),
        text=_get(obj, "text", str, where),
        repo=_get(meta, "repo", str, where),
        snapshot_id=snapshot,
        commit=_commit_id(meta.get("commit"), where),
        parent=_commit_id(meta.get("parent"), where),
        author_date=_get(meta, "author_date", str, where),
        subject=_get(meta, "subject", str, where),
        targets=(),
    )


def read_history_corpus(directory: Path, *, repository: Path | None = None) -> HistoryCorpus:
    """Read and check a history corpus (the module docstring's rules); InvalidCorpus
    names the file of any problem. ``repository`` reads the snapshots from another
    copy of the repository than the one recorded (one that was moved)."""
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise InvalidCorpus(f"{directory}: {what} (expected a history corpus)")
    manifest, extraction, digest = _manifest(directory)
    data = {name: _read(directory, name) for name in (QUERIES_FILE, QRELS_FILE)}
    for name, content in data.items():
        if manifest["files"].get(name) != _sha256(content):
            raise InvalidCorpus(
                f"{directory / name}: does not match {MANIFEST_FILE} (changed or half-written)"
            )
    snapshots: dict[str, str] = manifest["snapshots"]
    questions: dict[str, HistoryQuestion] = {}
    for where, line in _lines(directory, QUERIES_FILE, data[QUERIES_FILE]):
        question = _question(where, line, snapshots)
        if question.id in questions:
            raise InvalidCorpus(f"{where}: duplicate question id {question.id!r}")
        if snapshots[question.snapshot_id] != question.parent:
            raise InvalidCorpus(f"{where}: parent is not the commit of its snapshot")
        questions[question.id] = question
    targets: dict[str, list[str]] = {qid: [] for qid in questions}
    qrels = _lines(directory, QRELS_FILE, data[QRELS_FILE])
    if not qrels or qrels[0][1] + "\n" != _QRELS_HEADER:
        raise InvalidCorpus(f"{directory / QRELS_FILE}: line 1: expected the header")
    for where, line in qrels[1:]:
        fields = line.split("\t")
        if len(fields) != 3 or fields[2] != "1" or fields[0] not in targets:
            raise InvalidCorpus(f"{where}: expected a known question id, a function id and 1")
        if fields[1] in targets[fields[0]]:
            raise InvalidCorpus(f"{where}: duplicate target {fields[1]!r} of {fields[0]!r}")
        targets[fields[0]].append(fields[1])
    out: list[HistoryQuestion] = []
    for qid, question in questions.items():
        if not targets[qid]:
            raise InvalidCorpus(f"{directory / QRELS_FILE}: question {qid!r} has no target")
        out.append(replace(question, targets=tuple(sorted(targets[qid]))))
    if not out:
        raise InvalidCorpus(f"{directory / QUERIES_FILE}: no questions")
    return HistoryCorpus(
        path=directory,
        manifest=manifest,
        repository=repository if repository is not None else Path(manifest["repository"]["path"]),
        name=manifest["repository"]["name"],
        extraction=extraction,
        questions=out,
        snapshots={q.snapshot_id: q.parent for q in out},
        sha256=digest,
    )
