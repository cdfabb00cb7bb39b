"""``Database.evaluate`` over history corpora: which directories, which snapshots
are stored, loading the missing ones, then one evaluation of every question.

Each question of a history corpus is ranked in its own snapshot, the corpus's id for
its commit's parent (``<name>@<12 hex>``, ``-<digest>`` for other extraction
options). A ready snapshot of that id is used as it is, however it was loaded (a
previous ``eval``, or ``riido-pg load ID REPO --rev COMMIT`` with the same options):
the id names the tree and the options. The missing ones are loaded from the
repository, oldest commit first, so that each one's automatic base is the one before
it and they share their storage; each load is atomic, so an interrupted run leaves
the ones it finished, and the next run loads only the rest. A snapshot of that id
that is not ready is an error; the repository is read only when a snapshot is
missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from riido_pg.api.evaluate import EvalOptions, check_target
from riido_pg.api.loading import store
from riido_pg.api.models import embed, embedded_line
from riido_pg.api.results import Evaluated
from riido_pg.documents import check_snapshot_id
from riido_pg.errors import ConflictingOptions, Hint, InvalidCorpus, InvalidInput
from riido_pg.storage import DEFAULT_TEXT_CONFIG, Progress

if TYPE_CHECKING:
    from riido_pg.corpora.history import HistoryCorpus
    from riido_pg.documents import DocumentStream
    from riido_pg.shards import Router

__all__ = ["LOADING_PHASE", "Note", "checked_target", "history_corpora", "history_on"]

#: A line saying what a long run is doing now (``loading snapshot 3/46 …``).
Note = Callable[[str], None]

#: The progress phase counting the snapshots loaded.
LOADING_PHASE = "snapshots"
#: The progress phase counting the snapshots embedded (``eval --model``).
EMBEDDING_PHASE = "embedded_snapshots"


def _kind(path: Path) -> str:
    """ "history", "beir", or what the path is instead."""
    from riido_pg.corpora.manifest import is_history_corpus

    if not path.is_dir():
        return "not a directory" if path.exists() else "no such directory"
    if is_history_corpus(path):
        return "history"
    if (path / "corpus.jsonl").exists():
        return "beir"
    return "neither a BEIR directory (no corpus.jsonl) nor a history corpus (no history.json)"


def history_corpora(paths: Sequence[Path]) -> list[HistoryCorpus] | None:
    """The history corpora named by ``paths``, read and checked; None when ``paths``
    is one BEIR directory (or nothing), for the BEIR path. A BEIR directory beside
    others, several BEIR directories, a directory that is neither, the same corpus
    twice or a question id in two corpora are InvalidCorpus."""
    kinds = [_kind(p) for p in paths]
    if len(paths) <= 1 and "history" not in kinds:
        if kinds and kinds[0].startswith("neither"):
            raise InvalidCorpus(f"{paths[0]}: {kinds[0]}")
        return None  # a BEIR directory: the history corpus builder is not imported
    from riido_pg.corpora.history import read_history_corpus

    for path, kind in zip(paths, kinds, strict=True):
        if kind == "beir":
            raise InvalidCorpus(
                f"{path}: a BEIR directory is evaluated alone, not with other directories",
                Hint.same("give several directories only when all are history corpora"),
            )
        if kind != "history":
            expected = "" if kind.startswith("neither") else " (expected a history corpus)"
            raise InvalidCorpus(f"{path}: {kind}{expected}")
    corpora: list[HistoryCorpus] = []
    owner: dict[str, Path] = {}
    for path in paths:
        corpus = read_history_corpus(path)
        if any(c.path.resolve() == path.resolve() for c in corpora):
            raise InvalidCorpus(f"{path}: given twice")
        for q in corpus.questions:
            if q.id in owner:
                raise InvalidCorpus(
                    f"{path}: question {q.id!r} is in {owner[q.id]} too (two corpora of one "
                    "repository under the same name?)",
                    Hint(
                        "give each repository once, or build the corpora with distinct --name",
                        "give each repository once, or distinct names",
                    ),
                )
            owner[q.id] = path
        corpora.append(corpus)
    return corpora


def _plan(
    router: Router, corpora: Sequence[HistoryCorpus], cfg: str
) -> tuple[list[tuple[HistoryCorpus, str]], list[tuple[HistoryCorpus, str]]]:
    """Every snapshot of the corpora, oldest commit first per corpus, as (corpus, id);
    and those of them not stored yet. A stored one must be ready, with ``cfg``."""
    from riido_pg.evaluation.history import other_config
    from riido_pg.storage.snapshots import find_snapshot, get_snapshot

    order: list[tuple[HistoryCorpus, str]] = []
    missing: list[tuple[HistoryCorpus, str]] = []
    for corpus in corpora:
        for sid in reversed(corpus.snapshots):  # questions, hence snapshots, newest first
            order.append((corpus, sid))
            if any(sid == other for _, other in missing):
                continue  # a snapshot of two corpora (one repository, two ranges)
            conn = router.owner(sid)
            snap = find_snapshot(conn, sid)
            if snap is None:
                missing.append((corpus, sid))
            elif snap.state != "ready":
                get_snapshot(conn, sid)  # says why it is not ready, and what to do
            elif snap.text_config != cfg:
                raise other_config(sid, snap.text_config, cfg)
    return order, missing


def _streams(
    missing: Sequence[tuple[HistoryCorpus, str]], progress: Progress | None
) -> list[DocumentStream]:
    """The documents of each missing snapshot, not read yet, but checked now, before
    any load: the repository opens (else an error saying it is needed), holds the
    commit, and has the ``info/exclude`` the corpus was built with. The reads share
    one :class:`~riido_pg.extract.cache.FileCache`: a file unchanged since the
    snapshot before is not parsed again."""
    from riido_pg.corpora.history import snapshot_documents
    from riido_pg.corpora.history.snapshots import open_top
    from riido_pg.extract.cache import FileCache

    cache = FileCache()  # consecutive commits: each changed file parsed, no other
    opened: set[Path] = set()
    streams: list[DocumentStream] = []
    for corpus, sid in missing:
        if corpus.path not in opened:
            try:
                open_top(corpus.repository)
            except InvalidInput as exc:  # not git missing: that is the environment's
                n = sum(1 for c, _ in missing if c is corpus)
                raise InvalidCorpus(
                    f"{corpus.path}: its repository is needed to load {n} snapshot"
                    f"{'' if n == 1 else 's'} not stored yet (first {sid!r}): {exc.message}",
                    Hint.same("put the repository back where the corpus names it, or rebuild"),
                ) from exc
            opened.add(corpus.path)
        streams.append(snapshot_documents(corpus, sid, progress=progress, cache=cache))
    return streams


def _load_missing(
    router: Router,
    missing: Sequence[tuple[HistoryCorpus, str]],
    cfg: str,
    jobs: int,
    progress: Progress | None,
    note: Note | None,
) -> None:
    streams = _streams(missing, progress)
    for i, ((_, sid), docs) in enumerate(zip(missing, streams, strict=True)):
        if note is not None:
            note(f"loading snapshot {i + 1}/{len(missing)} {sid}")
        if progress is not None:
            progress(LOADING_PHASE, i, len(missing))
        with router.loading(sid) as conn:
            store(
                conn,
                sid,
                docs,
                reader=router.coordinator,
                text_config=cfg,
                jobs=jobs,
                progress=progress,
            )
    if progress is not None and missing:
        progress(LOADING_PHASE, len(missing), len(missing))


def _embed_all(
    router: Router, sids: Sequence[str], model: str, progress: Progress | None, note: Note | None
) -> None:
    """Embed each snapshot not yet embedded (only the texts no vector exists for),
    saying what each cost."""
    from riido_pg.storage import get_snapshot

    for i, sid in enumerate(sids):
        if progress is not None:
            progress(EMBEDDING_PHASE, i, len(sids))
        conn = router.owner(sid)
        done = embed(conn, sid, model, progress)
        if done is not None and note is not None:
            note(embedded_line(done, get_snapshot(conn, sid).documents))
    if progress is not None and sids:
        progress(EMBEDDING_PHASE, len(sids), len(sids))


def history_on(
    router: Router,
    corpora: Sequence[HistoryCorpus],
    options: EvalOptions,
    *,
    jobs: int,
    note: Note | None,
) -> Evaluated:
    """Load the corpora's missing snapshots (``jobs`` connections each), embed every
    snapshot with the model when one is named and it is not yet, and evaluate."""
    from riido_pg.evaluation.corpora import GivenQuestion
    from riido_pg.evaluation.history import HistorySource, SnapshotQuestions, evaluate_history
    from riido_pg.storage import check_text_config

    model, progress = options.model, options.progress
    cfg = check_text_config(router.coordinator, options.text_config or DEFAULT_TEXT_CONFIG)
    order, missing = _plan(router, corpora, cfg)
    _load_missing(router, missing, cfg, jobs, progress, note)
    if model is not None:  # loaded already: the façade checked it before any work
        _embed_all(router, [sid for _, sid in order], model, progress, note)
    parts = [
        SnapshotQuestions(
            router.owner(sid),
            sid,
            tuple(
                GivenQuestion(q.id, q.text, corpus.name, q.targets)
                for q in corpus.questions_of(sid)
            ),
        )
        for corpus, sid in order
    ]
    sources = [
        HistorySource(c.name, c.sha256, tuple(sid for corpus, sid in order if corpus is c))
        for c in corpora
    ]
    evaluation = evaluate_history(
        parts,
        sources,
        text_config=cfg,
        policies=options.policies,
        progress=progress,
        run_dir=options.run_dir,
        run_depth=options.run_depth,
        params=options.params,
        model=model,
    )
    loaded = {sid for _, sid in missing}
    return Evaluated(
        evaluation,
        None,
        loaded=tuple(sid for _, sid in missing),
        reused=tuple(dict.fromkeys(sid for _, sid in order if sid not in loaded)),
    )


def checked_target(
    corpus: Path | str | Sequence[Path | str] | None, snapshot: str | None
) -> tuple[Path | None, list[HistoryCorpus] | None]:
    """What ``Database.evaluate`` evaluates: a BEIR directory (or None: ``snapshot``)
    and no corpora, or history corpora; checked (:func:`history_corpora`,
    :func:`~riido_pg.api.evaluate.check_target`). History corpora are evaluated
    alone: not with a stored snapshot."""
    if corpus is None:
        paths = []
    elif isinstance(corpus, str | Path):
        paths = [Path(corpus)]
    else:
        paths = [Path(c) for c in corpus]
    corpora = history_corpora(paths)
    if corpora is None:
        path = paths[0] if paths else None
        check_target(path, snapshot)
        if snapshot is not None:
            check_snapshot_id(snapshot)
        return path, None
    if snapshot is not None:
        raise ConflictingOptions(
            "history corpora and a stored snapshot cannot be evaluated at once",
            Hint(
                "give the history corpus directories or --snapshot SNAPSHOT, not both",
                "pass corpora or snapshot=, not both",
            ),
        )
    return None, corpora
