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

from riido_pg.api import count
from riido_pg.cli.history import corpus_history
from riido_pg.cli.options import EvalPolicyOpt, whole_number
from riido_pg.cli.progress import progress_reporter
from riido_pg.cli.settings import database

__all__ = ["corpus_app", "corpus_docproxy", "eval_command"]

corpus_app = typer.Typer(help="Build evaluation corpora.", no_args_is_help=True)
corpus_app.command("history", short_help="Questions and targets from a repository's history.")(
    corpus_history
)


def eval_command(
    ctx: typer.Context,
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="DIR...",
            help="A BEIR directory (corpus.jsonl, queries.jsonl, qrels/test.tsv), stored "
            "as snapshot beir-<digest>-<config> and reused when unchanged; or one or more "
            "history corpora (corpus history), each question ranked in its own snapshot, "
            "loaded from the repository once and reused.",
            show_default=False,
        ),
    ] = None,
    policy: EvalPolicyOpt = None,
    text_config: Annotated[
        str | None,
        typer.Option(
            "--text-config",
            metavar="CONFIG",
            help="PostgreSQL text search configuration for a DIR (default english); "
            "with --snapshot it must be the snapshot's.",
            show_default=False,
        ),
    ] = None,
    snapshot: Annotated[
        str | None,
        typer.Option(
            "--snapshot",
            metavar="SNAPSHOT",
            help="Evaluate a stored corpus by snapshot id instead of a DIR.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            metavar="FILE",
            help="Write the result JSON to FILE ('-': print it instead of the table).",
            dir_okay=False,
            show_default=False,
        ),
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir",
            metavar="DIR",
            help="Write one TREC run file per policy (<policy>.trec) into DIR.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    run_depth: Annotated[
        int | None,
        typer.Option(
            "--run-depth",
            metavar="N",
            parser=whole_number("--run-depth"),
            help="Documents per question in run files (default 1000).",
            show_default=False,
        ),
    ] = None,
    fused_weight: Annotated[
        float | None,
        typer.Option(
            "--fused-weight",
            metavar="WEIGHT",
            help="Weight of identifier_bm25_fused (bm25 + WEIGHT * identifier_bm25); default: "
            "the documented constant.",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="Also evaluate this learned hint source (model_hints_baseline_first and "
            "model_structure_weighted), embedding the corpus if needed, and report every "
            "policy's cost.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Evaluate every policy on a BEIR corpus or history corpora: Recall@1, Recall@10,
    MRR, mean first-target rank."""
    from riido_pg.api import STDOUT, check_output, import_in_background, write_output

    if output is not None:
        check_output(output)  # a bad path costs no evaluation
    if output is None or str(output) != STDOUT:  # the table's, while the server works
        import_in_background("rich.console", "rich.table", "rich.text")
    with progress_reporter() as (progress, note), database(ctx) as db:
        done = db.evaluate(
            dirs or None,
            snapshot=snapshot,
            policies=policy,
            text_config=text_config,
            run_dir=run_dir,
            run_depth=run_depth,
            fused_weight=fused_weight,
            model=model,
            progress=progress,
            note=note,
        )
    if done.stored is not None:  # after the progress bar is gone
        verb = "stored" if done.stored == "stored" else "reusing stored"
        sys.stderr.write(f"{verb} corpus as snapshot {done.snapshot_id!r}\n")
    elif done.snapshot_id is None:
        sys.stderr.write(
            f"snapshots: {len(done.loaded)} loaded, {len(done.reused)} reused as stored\n"
        )
    if output is not None:
        write_output(output, done.evaluation.to_json())
        if str(output) == STDOUT:
            return
    from riido_pg.cli.tables import print_evaluation

    print_evaluation(done.evaluation)


@corpus_app.command("docproxy", short_help="Build the pinned documentation-proxy corpus.")
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
            metavar="DIR...",
            help="Where the pinned sdists are cached.",
            file_okay=False,
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build the pinned documentation-proxy corpus (sqlalchemy, rich, click) as a BEIR dir."""
    from riido_pg.api import build_docproxy

    def report(message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    stats = build_docproxy(out_dir, cache_dir=cache_dir, progress=report)
    typer.echo(
        f"wrote {out_dir}: {count(stats.documents, 'document')}, "
        f"{count(stats.questions, 'question')}, {count(stats.qrels, 'qrel')}"
    )
