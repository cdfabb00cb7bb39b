"""``riido-pg corpus history``: questions from a repository's own commits.

The commits are read newest first, in ``git log`` order from ``until`` (default
``HEAD``) down to, but not including, ``since`` and its ancestors; each becomes a
question or is skipped with one reason, until ``max_questions`` questions are
found. Reasons, in the order they are checked:

* ``merge`` (several parents, or a subject starting ``Merge``), ``revert``,
  ``fixup``, ``subject_not_utf8``, then the subject rules
  (:mod:`~riido_pg.corpora.history.subjects`: ``release``, ``changelog``,
  ``typo``, ``format``, ``too_short``);
* ``root_commit`` (no parent), ``shallow`` (a shallow clone's boundary: its parent
  is not in the repository), ``missing_objects`` (a parent, tree or blob the
  question needs is missing, as in a partial clone);
* ``no_target`` and ``too_many_targets`` (more than ``max_targets``): the target
  rules (:mod:`~riido_pg.corpora.history.targets`).

The questions plus every skipped count make the commits read (``counts`` in the
manifest), so no commit is lost without a reason. No qualifying commit at all is
an error (exit 2) that says what was skipped. Nothing is fetched: the repository is
read as it is (:mod:`riido_pg.extract.git`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from riido_pg.corpora.history.corpus import Extraction, HistoryQuestion, render_corpus
from riido_pg.corpora.history.diffs import changed_old_sides
from riido_pg.corpora.history.output import check_output_dir, write_corpus_dir
from riido_pg.corpora.history.snapshots import info_exclude_lines, open_top
from riido_pg.corpora.history.subjects import RULES_VERSION, judge_subject
from riido_pg.corpora.history.targets import MissingObjects, old_side_targets
from riido_pg.errors import InvalidInput
from riido_pg.extract.git import GitFailed, Repository, git_output
from riido_pg.extract.gittree import CatFile, RevisionTree
from riido_pg.extract.ignore import compile_excludes
from riido_pg.extract.languages import select_languages
from riido_pg.extract.walk import Item, PathFinder
from riido_pg.words import count

__all__ = ["DEFAULT_MAX", "DEFAULT_MAX_TARGETS", "HistoryOptions", "HistoryStats", "build"]

#: Questions written when ``--max`` is not given.
DEFAULT_MAX = 200
#: Most targets a question may have (more: skipped as ``too_many_targets``).
DEFAULT_MAX_TARGETS = 4
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_FORMAT = "--format=%H%x1f%P%x1f%aI%x1f%s"

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class HistoryOptions:
    """What ``corpus history`` reads and how (the command's options)."""

    max_questions: int = DEFAULT_MAX
    max_targets: int = DEFAULT_MAX_TARGETS
    since: str | None = None
    until: str | None = None
    langs: Sequence[str] | None = None
    excludes: Sequence[str] = ()
    #: Snapshots leave out test code (``load --no-tests``): test paths, and test
    #: functions in other files (Rust's ``mod tests`` and ``#[test]`` functions).
    no_tests: bool = False
    #: The repository's label in ids (default: its directory's name).
    name: str | None = None


@dataclass
class HistoryStats:
    """What a build read and wrote."""

    commits: int = 0
    questions: int = 0
    targets: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def describe(self) -> str:
        """One line, e.g. ``200 questions from 431 commits (skipped: 120 no target)``."""
        line = f"{count(self.questions, 'question')} from {count(self.commits, 'commit')}"
        if self.skipped:
            parts = sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
            line += " (skipped: " + ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in parts)
            line += ")"
        return line


def repository_name(repository: Repository, given: str | None) -> str:
    """The label of the repository in ids: ``given``, else its directory's name."""
    if given is not None:
        if not _NAME.fullmatch(given):
            raise InvalidInput(
                f"--name {given!r}: use letters, digits, '.', '_' or '-' (at most 100)"
            )
        return given
    top = repository.top
    name = top.name.removesuffix(".git") or top.parent.name
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", name).lstrip("._-")[:100]
    if not cleaned:
        raise InvalidInput(f"{top}: cannot name this repository from its path; give --name")
    return cleaned


def _log(repository: Repository, until: str, since: str | None) -> Iterator[list[bytes]]:
    """``[commit, parents, author date, subject]`` of each commit, newest first."""
    args = ["log", "--no-color", "--no-show-signature", "--encoding=UTF-8", "-z", _FORMAT, until]
    args += [f"^{since}"] if since else []
    with git_output(repository.path, *args, "--") as out:
        rest = b""
        while chunk := out.read(1 << 16):
            *records, rest = (rest + chunk).split(b"\0")
            for record in records:
                yield record.split(b"\x1f", 3)


@dataclass
class _Context:
    repository: Repository
    name: str
    options: HistoryOptions
    extraction: Extraction
    selected: frozenset[str]
    finder: PathFinder
    cat: CatFile
    shallow: frozenset[str]
    listings: dict[str, list[Item]] = field(default_factory=dict)
    blobs: dict[str, tuple[str, int, bytes | None] | None] = field(default_factory=dict)


def _question(ctx: _Context, record: list[bytes]) -> HistoryQuestion | str:
    """The question a commit gives, or the reason it gives none."""
    if len(record) != 4:
        raise GitFailed(f"{ctx.repository.path}: git log: unexpected output")
    commit, parents = record[0].decode("ascii"), record[1].decode("ascii").split()
    if len(parents) > 1:
        return "merge"
    try:
        subject = record[3].decode("utf-8")
    except UnicodeDecodeError:
        return "subject_not_utf8"
    verdict = judge_subject(subject)
    if verdict.reason is not None:
        return verdict.reason
    if not parents:
        return "shallow" if commit in ctx.shallow else "root_commit"
    parent = parents[0]
    try:
        sides = changed_old_sides(ctx.repository, parent, commit)
    except GitFailed:
        return "missing_objects"
    found = ctx.cat.get(parent)
    if found is None or found[2] is None or not found[2].startswith(b"tree "):
        return "missing_objects"
    root = found[2][5 : found[2].index(b"\n")].decode("ascii")
    # listings and ignore files are shared between commits: an object id is its content
    exclude = ctx.repository.info_exclude
    tree = RevisionTree(
        ctx.cat, root, len(parent) // 2, exclude, listings=ctx.listings, blobs=ctx.blobs
    )
    limit = ctx.options.max_targets
    try:
        targets = old_side_targets(tree, ctx.finder, ctx.selected, sides, limit)
    except MissingObjects:
        return "missing_objects"
    if not targets:
        return "no_target"
    if len(targets) > limit:
        return "too_many_targets"
    return HistoryQuestion(
        id=f"q-{ctx.name}-{commit[:12]}",
        text=verdict.text,
        repo=ctx.name,
        snapshot_id=ctx.extraction.snapshot_id(ctx.name, parent),
        commit=commit,
        parent=parent,
        author_date=record[2].decode("ascii"),
        subject=subject,
        targets=tuple(sorted(targets)),
    )


def build(
    repository_path: Path,
    output: Path,
    options: HistoryOptions = HistoryOptions(),
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> HistoryStats:
    """Write the history corpus of the repository at ``repository_path`` to the
    directory ``output`` (see the module docstring and
    :mod:`riido_pg.corpora.history.corpus`); returns what it read and wrote."""
    if options.max_questions < 1:
        raise InvalidInput(f"--max must be at least 1, not {options.max_questions}")
    if options.max_targets < 1:
        raise InvalidInput(f"--max-targets must be at least 1, not {options.max_targets}")
    selected = select_languages(options.langs)
    excludes = list(options.excludes)
    exclude_spec = compile_excludes(excludes)
    repository = open_top(repository_path)
    name = repository_name(repository, options.name)
    until = repository.commit(options.until or "HEAD")
    since = repository.commit(options.since) if options.since is not None else None
    check_output_dir(output, replace)  # a bad output costs no reading
    extraction = Extraction(
        langs=tuple(sorted(selected)) if options.langs is not None else None,
        excludes=tuple(excludes),
        info_exclude=info_exclude_lines(repository),
        no_tests=options.no_tests,
    )
    stats = HistoryStats()
    questions: list[HistoryQuestion] = []
    with CatFile(repository) as cat:
        ctx = _Context(
            repository,
            name,
            options,
            extraction,
            selected,
            PathFinder(exclude_spec, include_vendored=False),
            cat,
            repository.shallow_commits(),
        )
        for record in _log(repository, until, since):
            stats.commits += 1
            found = _question(ctx, record)
            if isinstance(found, str):
                stats.skipped[found] += 1
            else:
                questions.append(found)
                stats.targets += len(found.targets)
            if progress is not None:
                progress("commits", stats.commits, 0)
                progress("questions", len(questions), options.max_questions)
            if len(questions) == options.max_questions:
                break
    stats.questions = len(questions)
    if not questions:
        raise InvalidInput(f"{repository_path}: no qualifying commit: {stats.describe()}")
    manifest = {
        "counts": {
            "commits": stats.commits,
            "questions": stats.questions,
            "skipped": dict(sorted(stats.skipped.items())),
            "snapshots": len({q.snapshot_id for q in questions}),
            "targets": stats.targets,
        },
        "extraction": extraction.to_json(),
        "options": {"max": options.max_questions, "max_targets": options.max_targets},
        "range": {
            "since": options.since,
            "since_commit": since,
            "until": options.until or "HEAD",
            "until_commit": until,
        },
        "repository": {"name": name, "path": str(repository.path)},
        "rules_version": RULES_VERSION,
    }
    write_corpus_dir(output, render_corpus(manifest, questions), replace=replace)
    return stats
