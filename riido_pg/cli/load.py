"""``load``: store documents -- a file, a BEIR directory, a source tree or a table --
as an immutable snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from riido_pg import ConflictingOptions
from riido_pg.api import DEFAULT_TEXT_CONFIG, count
from riido_pg.cli.extract import (
    ExcludeOpt,
    IncludeVendoredOpt,
    LangOpt,
    NoTestsOpt,
    RevOpt,
    tree_notes,
)
from riido_pg.cli.options import ShardOpt, SnapshotArg, TextConfig, whole_number
from riido_pg.cli.output import note
from riido_pg.cli.progress import progress_bar
from riido_pg.cli.settings import database, settings

__all__ = ["load"]


def load(
    ctx: typer.Context,
    snapshot_id: SnapshotArg,
    source: Annotated[
        Path | None,
        typer.Argument(
            metavar="SOURCE",
            help="A .json request file, a .jsonl file of {id,text}, a BEIR directory, or a "
            "source tree (a directory without corpus.jsonl, or any directory of a git "
            "repository with --rev: one document per function).",
            show_default=False,
        ),
    ] = None,
    text_config: TextConfig = DEFAULT_TEXT_CONFIG,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace an existing snapshot with this content.")
    ] = False,
    lang: LangOpt = None,
    exclude: ExcludeOpt = None,
    include_vendored: IncludeVendoredOpt = False,
    no_tests: NoTestsOpt = False,
    rev: RevOpt = None,
    no_window: Annotated[
        bool,
        typer.Option(
            "--no-window",
            help="With --rev: leave out the revision's window of past commits (its last "
            "1,000 non-merge commits, read from git once per database: the first load of a "
            "long history spends most of its time there), which --policy structure_bm25 "
            "reads to lift what similar earlier commits changed.",
        ),
    ] = False,
    from_table: Annotated[
        str | None,
        typer.Option(
            "--from-table",
            metavar="TABLE",
            help="Read the documents from this table (SCHEMA.TABLE, or a table on the "
            "search path), inside the server (through a coordinator: the coordinator's "
            "table); no SOURCE.",
            show_default=False,
        ),
    ] = None,
    id_column: Annotated[
        str,
        typer.Option("--id-column", metavar="COLUMN", help="With --from-table: the id column."),
    ] = "id",
    text_column: Annotated[
        str,
        typer.Option("--text-column", metavar="COLUMN", help="With --from-table: the text column."),
    ] = "text",
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="NAME",
            help="Also embed every document with this learned hint source (for --model "
            "queries); on an unchanged snapshot only the embedding runs.",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            metavar="N",
            parser=whole_number("--jobs", high=64),
            help="Server connections indexing at once, 1 to 64 (default: this machine's "
            "cores, at most 4); 1 loads in one transaction on one connection.",
            show_default=False,
        ),
    ] = None,
    shard: ShardOpt = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="SNAPSHOT",
            help="Store it on this snapshot: its documents shared, only the difference "
            "written (default: the ready snapshot sharing the most documents, within "
            "bounds, or none).",
            show_default=False,
        ),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Store a self-contained snapshot (no base).")
    ] = False,
) -> None:
    """Store documents as an immutable snapshot."""
    from riido_pg import Table, TreeOptions

    if source is None and from_table is None:
        raise ConflictingOptions(
            "nothing to load: give a SOURCE (a file, a BEIR directory or a source tree) "
            "or --from-table TABLE"
        )
    if source is not None and from_table is not None:
        raise ConflictingOptions("give a SOURCE or --from-table TABLE, not both")
    if no_window and rev is None:
        raise ConflictingOptions("--no-window applies with --rev only (a work tree has no window)")
    tree = TreeOptions(lang or None, exclude or (), include_vendored, no_tests, rev, not no_window)
    target = Table(from_table, id_column, text_column) if from_table is not None else source
    assert target is not None
    with progress_bar() as progress, database(ctx) as db:
        loaded = db.load(
            snapshot_id,
            target,
            text_config=text_config,
            replace=replace,
            jobs=jobs,
            model=model,
            shard=shard,
            tree=tree,
            progress=progress,
            base=base,
            fresh=fresh,
        )
        settings(ctx).finish(f"snapshot {loaded.snapshot_id!r} is ready")
    if loaded.stats is not None:
        tree_notes(loaded.stats, debug=settings(ctx).debug)
    verb = {"created": "loaded", "replaced": "replaced", "unchanged": "unchanged:"}[loaded.action]
    line = f"{verb} snapshot {loaded.snapshot_id!r} ({count(loaded.documents, 'document')})"
    result = loaded.result
    if result.base is not None:  # what was written: the difference to the base
        on = (  # a replaced snapshot may be stored on its own previous content
            "its previous version" if result.base == loaded.snapshot_id else f"base {result.base!r}"
        )
        line += f" on {on}: +{result.added} −{result.dropped}"
    if loaded.embedded is not None:
        line += f", embedded with {loaded.embedded}"
    typer.echo(line)
    if result.note is not None:  # the load is done; only its tidying was cut short
        note(result.note)
