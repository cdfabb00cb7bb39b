"""Which functions of a git revision earlier, similar change requests changed: the
history-similarity prior's input (docs/evaluation.md "History similarity").

For revision R, the *past commits* are R's last :data:`SIMILAR_COMMITS` commits that
are not merges, in ``git rev-list --no-merges`` order from R (R included unless it is
a merge): the commits a history corpus draws its questions from. Each has its subject,
cleaned as a history question's is (:func:`~riido_pg.corpora.history.subjects.clean_subject`,
which cuts it at the longest a question may be, MAX_QUERY_BYTES),
and the functions it changed *at that commit*: git's diff between the commit and its
first parent, on the commit's side (so a function it added counts), mapped to the
innermost function of each changed line by the rules of a history corpus's targets
(test, documentation and example code left out). A function is taken by its
:func:`function_key`, its id without the trailing line number, so that the functions
of R it names are found however its lines moved since (a function renamed, moved or
removed since is lost; overloads sharing a key all count).

:func:`history_weights` is the score the prior lifts a document by, given a
question's lexemes: per past commit i, sim_i = BM25 (k1 = 1.2, b = 0.75, tf 1) of the
question against the subject's lexemes, idf and average length over the past
subjects; H(f) = Σ sim_i / |F_i| over the commits whose changed documents F_i hold f;
the weights are H / max H.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from riido_pg.extract.git import Repository

__all__ = [
    "CHANGE_TAU",
    "SIMILAR_B",
    "SIMILAR_COMMITS",
    "SIMILAR_K1",
    "PastCommit",
    "RevisionWindow",
    "change_weights",
    "documents_by_key",
    "function_key",
    "history_weights",
    "past_commits",
    "read_commits",
]

#: How many non-merge commits back the prior reads, chosen on the development
#: histories only (docs/evaluation.md "History similarity").
SIMILAR_COMMITS = 1000
#: BM25's constants for a question against the past subjects.
SIMILAR_K1 = 1.2
SIMILAR_B = 0.75
#: The change-history prior's decay: a window commit ``age`` positions back (0: the
#: newest) weighs exp(-age / CHANGE_TAU), a half-life of about 21 commits
#: (docs/evaluation.md "Change history").
CHANGE_TAU = 30.0
#: More functions than any commit changes: every changed function counts.
_NO_LIMIT = 10**9


def function_key(doc_id: str) -> str:
    """A function's id without its trailing line number (``path:qualname``); an id
    that does not end in ``:`` and digits is its own key."""
    head, _, tail = doc_id.rpartition(":")
    return head if head and tail.isdigit() else doc_id


@dataclass(frozen=True, slots=True)
class PastCommit:
    """One past commit: its id, cleaned subject and the keys of the functions it
    changed (paths relative to the directory read)."""

    commit: str
    subject: str
    keys: frozenset[str]


def past_commits(root: Path, rev: str, commits: int = SIMILAR_COMMITS) -> list[PastCommit]:
    """Revision ``rev``'s last ``commits`` non-merge commits of the repository at
    ``root``, newest first (see the module docstring). A directory inside the work
    tree reads that subtree: a function elsewhere is no key."""
    from riido_pg.extract.git import open_repository

    repository = open_repository(root)
    commit = repository.commit(rev)
    shas = (
        repository.run("rev-list", "--no-merges", f"--max-count={commits}", commit, "--")
        .decode("ascii")
        .split()
    )
    return read_commits(root, shas)


def read_commits(root: Path, shas: Sequence[str], *, whole: bool = False) -> list[PastCommit]:
    """Each commit's cleaned subject and the keys of the functions it changed, on its
    own side of the diff from its first parent (a root commit, or one whose objects
    are missing, changed nothing known); paths relative to ``root`` (``whole``: to the
    repository's top, every changed function kept wherever it is)."""
    from riido_pg.corpora.history.diffs import changed_old_sides
    from riido_pg.corpora.history.subjects import clean_subject
    from riido_pg.corpora.history.targets import MissingObjects, old_side_targets
    from riido_pg.extract.git import GitFailed, open_repository
    from riido_pg.extract.gittree import CatFile, RevisionTree
    from riido_pg.extract.ignore import compile_excludes
    from riido_pg.extract.languages import select_languages
    from riido_pg.extract.walk import Item, PathFinder

    repository = open_repository(root)
    prefix = repository.prefix
    selected = select_languages(None)
    finder = PathFinder(compile_excludes([]), include_vendored=False)
    listings: dict[str, list[Item]] = {}
    blobs: dict[str, tuple[str, int, bytes | None] | None] = {}
    found: list[PastCommit] = []
    heads = _heads(repository, shas)
    with CatFile(repository) as cat:
        for sha in shas:
            parents, subject = heads[sha]
            keys: set[str] = set()
            if parents.split():
                try:
                    sides = changed_old_sides(repository, sha, parents.split()[0])
                    obj = cat.get(sha)
                    if obj is None or obj[2] is None:
                        raise MissingObjects(sha)
                    tree_id = obj[2][5 : obj[2].index(b"\n")].decode("ascii")
                    tree = RevisionTree(
                        cat,
                        tree_id,
                        len(sha) // 2,
                        repository.info_exclude,
                        listings=listings,
                        blobs=blobs,
                    )
                    ids = old_side_targets(tree, finder, selected, sides, _NO_LIMIT)
                except (GitFailed, MissingObjects, OSError):
                    ids = set()
                cut = "" if whole else prefix
                keys = {function_key(i)[len(cut) :] for i in ids if i.startswith(cut)}
            found.append(PastCommit(sha, clean_subject(subject), frozenset(keys)))
    return found


def _heads(repository: Repository, shas: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each commit's parents (ids separated by spaces) and subject, read by one git
    command for them all (one per commit cost a process each: a fifth of a window's
    reading)."""
    if not shas:
        return {}
    out = repository.run(
        "log",
        "--no-walk=unsorted",
        "--no-show-signature",
        "-z",
        "--format=%H%x1f%P%x1f%s",
        "--stdin",
        input="".join(f"{sha}\n" for sha in shas).encode("ascii"),
    )
    heads: dict[str, tuple[str, str]] = {}
    for record in out.decode("utf-8", "replace").split("\0"):
        if record:
            sha, parents, subject = record.split("\x1f", 2)
            heads[sha] = (parents, subject)
    return heads


@dataclass(frozen=True, slots=True)
class RevisionWindow:
    """The window a load of revision ``rev`` of the repository at ``root`` stores:
    :meth:`shas` lists its past commits (one git command), :meth:`read` reads what
    some of them say and changed (keys relative to the repository's top, so that a
    commit read once serves a load of any directory of the repository), and
    ``prefix`` is where ``root`` sits (a key names a document of the load as
    ``prefix`` + its key)."""

    root: Path
    rev: str
    commits: int = SIMILAR_COMMITS

    @property
    def prefix(self) -> str:
        from riido_pg.extract.git import open_repository

        return open_repository(self.root).prefix

    def shas(self) -> list[str]:
        """The window's commit ids, newest first (see :func:`past_commits`)."""
        from riido_pg.extract.git import open_repository

        repository = open_repository(self.root)
        commit = repository.commit(self.rev)
        return (
            repository.run("rev-list", "--no-merges", f"--max-count={self.commits}", commit, "--")
            .decode("ascii")
            .split()
        )

    def read(self, shas: Sequence[str]) -> list[PastCommit]:
        """:func:`read_commits` of these commits, keys relative to the repository's top."""
        return read_commits(self.root, shas, whole=True)


def history_weights(
    question: Iterable[str],
    subjects: Sequence[Iterable[str]],
    changed: Sequence[Iterable[int]],
) -> dict[int, float]:
    """Per document (its number), H / max H for a question's distinct lexemes, given
    each past commit's subject lexemes and the documents it changed (``subjects[i]``
    and ``changed[i]`` describe commit i); documents with H = 0 are left out."""
    subject_sets = [frozenset(s) for s in subjects]
    n = len(subject_sets)
    if n == 0:
        return {}
    avgdl = sum(len(s) for s in subject_sets) / n
    df: dict[str, int] = {}
    for s in subject_sets:
        for lexeme in s:
            df[lexeme] = df.get(lexeme, 0) + 1
    idf = {x: math.log(1 + (n - d + 0.5) / (d + 0.5)) for x, d in df.items()}
    wanted = [x for x in dict.fromkeys(question) if x in idf]
    h: dict[int, float] = {}
    for s, docs in zip(subject_sets, changed, strict=True):
        sim = 0.0
        if avgdl > 0:
            norm = SIMILAR_K1 * (1 - SIMILAR_B + SIMILAR_B * len(s) / avgdl)
            for x in wanted:
                if x in s:
                    sim += idf[x] * (SIMILAR_K1 + 1) / (1 + norm)
        f = sorted(set(docs))
        if sim <= 0 or not f:
            continue
        for d in f:
            h[d] = h.get(d, 0.0) + sim / len(f)
    top = max(h.values(), default=0.0)
    return {d: v / top for d, v in h.items()} if top > 0 else {}


def documents_by_key(ids: Mapping[str, int]) -> dict[str, list[int]]:
    """Each function key of a snapshot's documents (id -> number) with its numbers."""
    by_key: dict[str, list[int]] = {}
    for doc_id, number in ids.items():
        by_key.setdefault(function_key(doc_id), []).append(number)
    return by_key


def change_weights(changed: Sequence[Iterable[int]]) -> dict[int, float]:
    """Per document (its number), C / max C for the change-history prior, given the
    documents each window commit changed (``changed[age]``, newest first): C(f) =
    sum of exp(-age / CHANGE_TAU) over the commits that changed f, summed in window
    order; documents no commit changed are left out."""
    c: dict[int, float] = {}
    for age, docs in enumerate(changed):
        weight = math.exp(-float(age) / CHANGE_TAU)
        for d in sorted(set(docs)):
            c[d] = c.get(d, 0.0) + weight
    top = max(c.values(), default=0.0)
    return {d: v / top for d, v in c.items()} if top > 0 else {}
