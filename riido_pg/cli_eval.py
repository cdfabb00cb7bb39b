"""The ``eval`` and ``corpus docproxy`` commands (CONTRACTS §2, §5).

Registered on the main app by :func:`register`. Importing this module is cheap:
numpy, scipy and the evaluation code are imported inside the commands, so the
start-up time of other commands (``riido-pg hints``) does not pay for them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from riido_pg.errors import ConflictingOptions, InvalidCorpus, InvalidInput

if TYPE_CHECKING:
    from riido_pg.evaluation import Evaluation

__all__ = ["corpus_app", "corpus_docproxy", "eval_command", "register"]

corpus_app = typer.Typer(help="Build evaluation corpora.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add ``eval`` and the ``corpus`` group to ``app``."""
    app.command("eval")(eval_command)
    app.add_typer(corpus_app, name="corpus")


def eval_command(
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
            help="Policy to evaluate; repeat for several. Default: bm25, identifier_bm25, "
            "identifier_bm25_baseline_first, identifier_bm25_auxiliary_first.",
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
    from riido_pg.cli import _connect, _db_errors, _progress
    from riido_pg.evaluation import check_policies, evaluate, evaluation_json, store_corpus
    from riido_pg.store import DEFAULT_TEXT_CONFIG, check_text_config, get_snapshot

    policies = check_policies(policy)
    note = ""
    with _db_errors(), _progress() as progress:
        conn = _connect()
        with conn:
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
            result = evaluate(
                conn,
                snapshot_id,
                policies=policies,
                progress=progress,
                run_dir=run_dir,
                run_depth=run_depth,
            )
    sys.stderr.write(note)  # after the progress bar is gone
    data = result.to_dict()
    text = evaluation_json(data)
    if output is not None and str(output) == "-":
        sys.stdout.write(text)
        return
    if output is not None:
        _write_atomically(output, text)
    _print_table(result, data)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with tmp.open("w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write the output: {exc.strerror}") from exc


def _print_table(result: Evaluation, data: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from riido_pg.ranking import BM25

    corpus = data["corpus"]
    title = (
        f"{corpus['snapshot_id']} · {corpus['documents']} documents · "
        f"{corpus['questions']} questions"
    )
    notes = []
    if corpus["skipped_questions"]:
        notes.append(f"{corpus['skipped_questions']} without targets skipped")
    if corpus["identifier_out_of_scope"]:
        notes.append(f"{corpus['identifier_out_of_scope']} outside identifier limits (ran bm25)")
    caption = (
        f"text config {data['config']['text_config']}; ranks of the first target over every "
        "document; improved/worsened/unchanged: per question, versus bm25"
    )
    if notes:
        caption += "; " + "; ".join(notes)
    table = Table(title=title, caption=caption)
    table.add_column("policy", no_wrap=True)
    for name in ("recall@1", "recall@10", "mrr", "mean rank"):
        table.add_column(name, justify="right")
    for name in ("improved", "worsened", "unchanged"):
        table.add_column(name, justify="right")
    versus = data["versus_baseline"]
    for p in result.policies:
        m = data["policies"][p]
        counts = versus.get(p)
        table.add_row(
            p,
            f"{m['recall@1']:.4f}",
            f"{m['recall@10']:.4f}",
            f"{m['mrr']:.4f}",
            f"{m['mean_first_target_rank']:.2f}",
            *(
                [str(counts[k]) for k in ("improved", "worsened", "unchanged")]
                if counts is not None
                else (["-"] * 3 if p == BM25 else [""] * 3)
            ),
        )
    # Wide enough for the policy names when stdout is a file or a pipe.
    console = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 120)
    console.print(table)
    per_repo = data["per_repo"]
    if len(per_repo) > 1:
        repo_table = Table(title="per repository")
        repo_table.add_column("repo")
        repo_table.add_column("questions", justify="right")
        repo_table.add_column("policy", no_wrap=True)
        for name in ("recall@1", "recall@10", "mrr", "mean rank"):
            repo_table.add_column(name, justify="right")
        counts_by_repo = {repo: len(rs) for repo, rs in result.repos().items()}
        for repo in sorted(per_repo):
            for i, p in enumerate(result.policies):
                m = per_repo[repo][p]
                repo_table.add_row(
                    repo if i == 0 else "",
                    str(counts_by_repo[repo]) if i == 0 else "",
                    p,
                    f"{m['recall@1']:.4f}",
                    f"{m['recall@10']:.4f}",
                    f"{m['mrr']:.4f}",
                    f"{m['mean_first_target_rank']:.2f}",
                    end_section=i == len(result.policies) - 1,
                )
        console.print(repo_table)


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
    import importlib

    docproxy: Any = importlib.import_module("riido_pg.docproxy")

    def report(message: str) -> None:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()

    stats = docproxy.build_docproxy(out_dir, cache_dir=cache_dir, progress=report)
    typer.echo(
        f"wrote {out_dir}: {stats.documents} documents, {stats.questions} questions, "
        f"{stats.qrels} qrels"
    )
