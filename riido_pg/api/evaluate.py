"""``Database.evaluate``: a BEIR directory stored (or found) as a snapshot on the
server a load of it would go to, or a stored corpus found where it is; its text
configuration checked; embedded when a model is named; then evaluated there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from riido_pg.api.models import embed
from riido_pg.api.results import Evaluated
from riido_pg.errors import ConflictingOptions, Hint, InvalidCorpus
from riido_pg.quoting import shell_arg
from riido_pg.storage import DEFAULT_TEXT_CONFIG, Progress

if TYPE_CHECKING:
    from riido_pg.server.connect import Conn
    from riido_pg.shards import Router

__all__ = ["EvalOptions", "check_target", "evaluate_on"]


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """What every evaluation takes besides its corpus (checked policies, the run
    depth resolved)."""

    policies: tuple[str, ...]
    text_config: str | None
    run_dir: Path | None
    run_depth: int
    #: The policies' parameter values the caller gave (``fused_weight`` included).
    params: dict[str, float]
    model: str | None
    progress: Progress | None


def check_target(corpus: Path | None, snapshot: str | None) -> None:
    """Exactly one of a BEIR directory and a stored snapshot, the directory existing."""
    if corpus is None and snapshot is None:
        raise ConflictingOptions(
            "nothing to evaluate",
            Hint(
                "give a DIR to evaluate (a BEIR directory, or history corpora), or "
                "--snapshot SNAPSHOT for a stored corpus",
                "pass a BEIR directory or history corpora, or snapshot= for a stored corpus",
            ),
        )
    if corpus is not None and snapshot is not None:
        raise ConflictingOptions(
            "a BEIR directory and a stored snapshot cannot be evaluated at once",
            Hint(
                "give a BEIR_DIR or --snapshot SNAPSHOT, not both",
                "pass a corpus or snapshot=, not both",
            ),
        )
    if corpus is not None and not corpus.is_dir():
        exists = corpus.exists()
        what = "not a directory" if exists else "no such directory"
        hint = None
        if not exists:  # a stored corpus is named by its snapshot id, never by a path
            hint = Hint(
                "a stored corpus is evaluated with --snapshot SNAPSHOT "
                "(`riido-pg snapshots list` lists them)",
                "a stored corpus is evaluated with snapshot= (list_snapshots() lists them)",
            )
        raise InvalidCorpus(
            f"{corpus}: {what} (expected a BEIR directory or a history corpus)", hint
        )


def _stored(
    router: Router, corpus: Path, text_config: str, progress: Progress | None
) -> tuple[Conn, str, str]:
    from riido_pg.evaluation import snapshot_id_for, store_corpus
    from riido_pg.evaluation.beir import corpus_sha256
    from riido_pg.storage import check_text_config

    cfg = check_text_config(router.coordinator, text_config)
    conn = router.for_load(snapshot_id_for(corpus_sha256(corpus), cfg))
    stored = store_corpus(conn, corpus, text_config=text_config, progress=progress)
    return conn, stored.snapshot_id, stored.action


def _found(router: Router, snapshot: str, text_config: str | None) -> Conn:
    from riido_pg.storage import check_text_config, get_snapshot

    conn = router.owner(snapshot)
    if text_config is not None:
        wanted = check_text_config(conn, text_config)
        have = get_snapshot(conn, snapshot).text_config
        if wanted != have:
            raise ConflictingOptions(
                f"snapshot {snapshot!r} uses text config {have!r}, not {wanted!r}",
                Hint(
                    "evaluate the BEIR directory with --text-config "
                    f"{shell_arg(text_config)} to store it with that configuration",
                    f"evaluate the BEIR directory with text_config={text_config!r} to "
                    "store it with that configuration",
                ),
            )
    return conn


def evaluate_on(
    router: Router, corpus: Path | None, snapshot: str | None, options: EvalOptions
) -> Evaluated:
    """Evaluate (checked arguments, the model loaded) on ``router``'s servers. A corpus
    stored now stays locked as a load's (:meth:`~riido_pg.shards.Router.for_load`)
    until the evaluation ends, and no longer."""
    from riido_pg.background import import_in_background
    from riido_pg.evaluation import evaluate

    # the sparse arithmetic's scipy, imported while the statements below wait
    import_in_background("scipy.sparse")
    stored = None
    text_config, model, progress = options.text_config, options.model, options.progress
    try:
        if corpus is not None:
            conn, snapshot_id, stored = _stored(
                router, corpus, text_config or DEFAULT_TEXT_CONFIG, progress
            )
        else:
            assert snapshot is not None
            conn, snapshot_id = _found(router, snapshot, text_config), snapshot
        if model is not None:  # loaded already: the façade checked it before any work
            embed(conn, snapshot_id, model, progress)
        result = evaluate(
            conn,
            snapshot_id,
            policies=options.policies,
            progress=progress,
            run_dir=options.run_dir,
            run_depth=options.run_depth,
            params=options.params,
            model=model,
        )
    finally:
        router.end_load()
    return Evaluated(result, snapshot_id, stored)
