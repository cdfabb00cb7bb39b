"""``eval`` and ``corpus docproxy``: batch evaluation (README "Evaluation").

Importing this module is cheap: numpy, scipy and the evaluation code are imported
inside the commands, so the start-up time of other commands (``riido-pg hints``) does
not pay for them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from riido_pg.cli.context import (
    DebugOption,
    DsnOption,
    embed,
    load_model,
    progress_bar,
    routed,
    settings,
)
from riido_pg.cli.history import corpus_history
from riido_pg.errors import ConflictingOptions, InvalidCorpus
from riido_pg.words import count

__all__ = ["corpus_app", "corpus_docproxy", "eval_command"]

corpus_app = typer.Typer(help="Build evaluation corpora.", no_args_is_help=True)
corpus_app.command("history")(corpus_history)


def eval_command(
    ctx: typer.Context,
    beir_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="BEIR_DIR",
            help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv). It is "
            "stored as snapshot beir-<digest>-<config> and reused when unchanged.",
            show_default=False,
        ),
    ] = None,
    policy: Annotated[
        list[str] | None,
        typer.Option(
            "--policy",
            metavar="POLICY",
            help="Policy to evaluate; repeat for several. Default: every policy that needs "
            "nothing per question.",
            show_default=False,
        ),
    ] = None,
    text_config: Annotated[
        str | None,
        typer.Option(
            "--text-config",
            help="PostgreSQL text search configuration for a BEIR_DIR (default english); "
            "with --snapshot it must be the snapshot's.",
            show_default=False,
        ),
    ] = None,
    snapshot: Annotated[
        str | None,
        typer.Option(
            "--snapshot",
            metavar="ID",
            help="Evaluate a stored corpus by snapshot id instead of a BEIR_DIR.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            help="Write the result JSON to FILE ('-': print it instead of the table).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir",
            help="Write one TREC run file per policy (<policy>.trec) into DIR.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    run_depth: Annotated[
        int,
        typer.Option("--run-depth", min=1, help="Documents per question in run files."),
    ] = 1000,
    fused_weight: Annotated[
        float | None,
        typer.Option(
            "--fused-weight",
            metavar="W",
            help="Weight w of identifier_bm25_fused (bm25 + w * identifier_bm25); default: "
            "the documented constant.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="Also evaluate this learned hint source (model_hints_baseline_first), "
            "embedding the corpus if needed, and report every policy's cost.",
            show_default=False,
        ),
    ] = None,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Evaluate every policy on a BEIR corpus: Recall@1, Recall@10, MRR, mean first-target rank."""
    if beir_dir is None and snapshot is None:
        raise ConflictingOptions("give a BEIR_DIR to evaluate, or --snapshot ID for a stored one")
    if beir_dir is not None and snapshot is not None:
        raise ConflictingOptions("give either a BEIR_DIR or --snapshot ID, not both")
    if beir_dir is not None and not beir_dir.is_dir():
        hint = (
            f"; to evaluate a stored corpus use --snapshot {beir_dir}"
            if not beir_dir.exists()
            else ""
        )
        what = "not a directory" if beir_dir.exists() else "no such directory"
        raise InvalidCorpus(f"{beir_dir}: {what} (expected a BEIR directory){hint}")
    from riido_pg.evaluation import check_policies, evaluate, store_corpus
    from riido_pg.files import STDOUT, check_output, write_output
    from riido_pg.storage import DEFAULT_TEXT_CONFIG, check_text_config, get_snapshot

    settings(ctx, dsn, debug)
    if output is not None:
        check_output(output)  # a bad path costs no evaluation
    policies = check_policies(policy, model)
    if model is not None:
        load_model(model)  # an unknown or uninstalled model fails before any work
    note = ""
    with progress_bar() as progress, routed(ctx) as router:
        if beir_dir is not None:  # its snapshot goes where a load of it would go
            from riido_pg.evaluation.beir import corpus_sha256
            from riido_pg.evaluation.corpora import snapshot_id_for

            cfg = check_text_config(router.coordinator, text_config or DEFAULT_TEXT_CONFIG)
            conn = router.for_load(snapshot_id_for(corpus_sha256(beir_dir), cfg))
        else:
            assert snapshot is not None
            conn = router.owner(snapshot)
        if beir_dir is not None:
            stored = store_corpus(
                conn,
                beir_dir,
                text_config=text_config or DEFAULT_TEXT_CONFIG,
                progress=progress,
            )
            snapshot_id = stored.snapshot_id
            verb = "stored" if stored.action == "stored" else "reusing stored"
            note = f"{verb} corpus as snapshot {snapshot_id!r}\n"
        else:
            assert snapshot is not None
            snapshot_id = snapshot
            if text_config is not None:
                wanted = check_text_config(conn, text_config)
                have = get_snapshot(conn, snapshot_id).text_config
                if wanted != have:
                    raise ConflictingOptions(
                        f"snapshot {snapshot_id!r} uses text config {have!r}, not "
                        f"{wanted!r}; evaluate the BEIR directory with --text-config "
                        f"{text_config} to store it with that configuration"
                    )
        embed(conn, snapshot_id, model, progress)
        result = evaluate(
            conn,
            snapshot_id,
            policies=policies,
            progress=progress,
            run_dir=run_dir,
            run_depth=run_depth,
            fused_weight=fused_weight,
            model=model,
        )
    sys.stderr.write(note)  # after the progress bar is gone
    text = result.to_json()
    if output is not None:
        write_output(output, text)
        if str(output) == STDOUT:
            return
    from riido_pg.cli.tables import print_evaluation

    print_evaluation(result)


@corpus_app.command("docproxy")
def corpus_docproxy(
    out_dir: Annotated[
        Path,
        typer.Argument(
            metavar="OUT_DIR", help="Directory to write the BEIR corpus into.", file_okay=False
        ),
    ],
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            help="Where the pinned sdists are cached.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the pinned documentation-proxy corpus (sqlalchemy, rich, click) as a BEIR dir."""
    from riido_pg.corpora.docproxy import build_docproxy

    def report(message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    stats = build_docproxy(out_dir, cache_dir=cache_dir, progress=report)
    typer.echo(
        f"wrote {out_dir}: {count(stats.documents, 'document')}, "
        f"{count(stats.questions, 'question')}, {count(stats.qrels, 'qrel')}"
    )
