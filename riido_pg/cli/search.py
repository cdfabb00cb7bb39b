"""``hints``, ``load`` and ``query``: ranking documents and storing snapshots."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from riido_pg.cli.context import (
    DebugOption,
    DsnOption,
    Format,
    HintsFile,
    IdentifierHints,
    LimitOpt,
    ModelOpt,
    PolicyOpt,
    ShardOpt,
    TextConfig,
    connect,
    connect_for_load,
    embed,
    emit_json,
    load_model,
    note,
    progress_bar,
    routed,
    select_policy,
    settings,
)
from riido_pg.cli.extract import (
    ExcludeOpt,
    IncludeVendoredOpt,
    LangOpt,
    NoTestsOpt,
    RevOpt,
    tree_notes,
)
from riido_pg.errors import ConflictingOptions
from riido_pg.storage.loading import LoadResult
from riido_pg.storage.snapshots import DEFAULT_TEXT_CONFIG
from riido_pg.words import count

__all__ = ["TABLE_ROWS", "hints", "load", "query"]

#: Rows ``query --format table`` shows when no ``--limit`` is given.
TABLE_ROWS = 20

SnapshotIdArg = Annotated[str, typer.Argument(metavar="SNAPSHOT_ID", help="Snapshot id.")]
NO_WORDS = (
    "the query has no searchable words (empty, or only stop words for this text "
    "configuration): every document scores 0 and they follow in id order"
)


def hints(
    ctx: typer.Context,
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    text_config: TextConfig = DEFAULT_TEXT_CONFIG,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Rank the documents given as JSON on stdin; keeps nothing.

    stdin: {"snapshot_id": ..., "query": ..., "documents": [{"id": ..., "text": ...}]}
    """
    from riido_pg.documents import MAX_REQUEST_BYTES, parse_request
    from riido_pg.ranking import rank_documents

    settings(ctx, dsn, debug)
    chosen, hint_ids = select_policy(identifier_hints, hints_file, policy, model)
    if sys.stdin.isatty():
        raise ConflictingOptions("hints reads a JSON request on stdin; pipe one in")
    # read one byte past the limit, never more: parse_request reports the overflow
    request = parse_request(sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1))
    with connect(ctx) as conn:
        ranking = rank_documents(
            conn,
            request,
            policy=chosen,
            text_config=text_config,
            limit=limit,
            hints=hint_ids,
            model=model,
        )
    if not ranking.searchable:
        note(NO_WORDS)
    emit_json(ranking.to_dict())


def load(
    ctx: typer.Context,
    snapshot_id: SnapshotIdArg,
    source: Annotated[
        Path | None,
        typer.Argument(
            metavar="SOURCE",
            help="A .json request file, a .jsonl file of {id,text}, a BEIR directory, or a "
            "source tree (a directory without corpus.jsonl: one document per function).",
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
    from_table: Annotated[
        str | None,
        typer.Option(
            "--from-table",
            metavar="SCHEMA.TABLE",
            help="Read the documents from this table, inside the server (no SOURCE).",
            show_default=False,
        ),
    ] = None,
    id_column: Annotated[
        str, typer.Option("--id-column", metavar="C", help="With --from-table: the id column.")
    ] = "id",
    text_column: Annotated[
        str,
        typer.Option("--text-column", metavar="C", help="With --from-table: the text column."),
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
            min=1,
            max=64,
            help="Server connections indexing at once (default: this machine's cores, "
            "at most 4); 1 loads in one transaction on one connection.",
            show_default=False,
        ),
    ] = None,
    shard: ShardOpt = None,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Store documents as an immutable snapshot."""
    from riido_pg.documents import check_snapshot_id, read_source
    from riido_pg.storage import load_snapshot, load_snapshot_from_table
    from riido_pg.storage.loading import default_jobs

    settings(ctx, dsn, debug)
    check_snapshot_id(snapshot_id)
    n_jobs = jobs if jobs is not None else default_jobs()
    if model is not None:
        load_model(model)  # an unknown or uninstalled model fails before any work
    if rev is not None and from_table is not None:
        raise ConflictingOptions("--rev reads a git repository given as SOURCE, not a table")
    if (source is None) == (from_table is None):
        raise ConflictingOptions("give a SOURCE to load, or --from-table SCHEMA.TABLE, not both")
    if from_table is not None:
        # the table is read where the DSN points (a coordinator), the snapshot is
        # written on its shard
        with progress_bar() as progress, routed(ctx) as router:
            conn = router.for_load(snapshot_id, shard)
            result = load_snapshot_from_table(
                conn,
                snapshot_id,
                from_table,
                id_column,
                text_column,
                text_config=text_config,
                replace=replace,
                progress=progress,
                jobs=n_jobs,
                source=router.coordinator,
            )
            embedded = embed(conn, snapshot_id, model, progress)
        _loaded(result, model if embedded else None)
        return
    assert source is not None
    if rev is not None:
        from riido_pg.extract.gittree import open_revision

        open_revision(source, rev)  # a bad repository or revision costs no connection
    tree = source.is_dir() and (rev is not None or not (source / "corpus.jsonl").exists())
    if not tree and (lang or exclude or include_vendored or no_tests):
        raise ConflictingOptions(
            "--lang, --exclude, --include-vendored and --no-tests apply to a source tree, "
            f"not to {source}"
        )
    with progress_bar() as progress:
        if tree:
            from riido_pg.extract import ExtractStats, tree_documents

            stats = ExtractStats()
            docs = tree_documents(
                source,
                langs=lang or None,
                excludes=exclude or (),
                include_vendored=include_vendored,
                no_tests=no_tests,
                stats=stats,
                progress=progress,
                rev=rev,
            )
        else:
            docs = read_source(source, snapshot_id=snapshot_id)
        with connect_for_load(ctx, snapshot_id, shard) as conn:
            result = load_snapshot(
                conn,
                snapshot_id,
                docs,
                text_config=text_config,
                replace=replace,
                progress=progress,
                jobs=n_jobs,
            )
            embedded = embed(conn, snapshot_id, model, progress)
    if tree:
        tree_notes(stats, debug=debug)
    _loaded(result, model if embedded else None)


def _loaded(result: LoadResult, model: str | None = None) -> None:
    verb = {"created": "loaded", "replaced": "replaced", "unchanged": "unchanged:"}[result.action]
    line = f"{verb} snapshot {result.snapshot_id!r} ({count(result.documents, 'document')})"
    if model is not None:
        line += f", embedded with {model}"
    typer.echo(line)


def query(
    ctx: typer.Context,
    snapshot_id: SnapshotIdArg,
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    limit: LimitOpt = None,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            help=f"json (every candidate) or table (the first {TABLE_ROWS} unless --limit).",
        ),
    ] = Format.json,
    model: ModelOpt = None,
    dsn: DsnOption = None,
    debug: DebugOption = False,
) -> None:
    """Rank a stored snapshot for a question."""
    from riido_pg.documents import check_query, check_snapshot_id
    from riido_pg.ranking import rank_snapshot

    settings(ctx, dsn, debug)
    check_snapshot_id(snapshot_id)  # bad input costs no connection
    check_query(query_text)
    chosen, hint_ids = select_policy(identifier_hints, hints_file, policy, model)
    shown = limit if limit is not None or fmt is Format.json else TABLE_ROWS
    with routed(ctx) as router:
        ranking = router.run(
            snapshot_id,
            lambda conn: rank_snapshot(
                conn,
                snapshot_id,
                query_text,
                policy=chosen,
                limit=shown,
                hints=hint_ids,
                model=model,
            ),
        )
    if not ranking.searchable:
        note(NO_WORDS)
    if fmt is Format.json:
        emit_json(ranking.to_dict())
        return
    from riido_pg.cli.tables import print_ranking

    print_ranking(ranking, more_hint=limit is None)
