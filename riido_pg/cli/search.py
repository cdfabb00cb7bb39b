"""``hints`` and ``query``: ranking documents given on stdin, or a stored snapshot."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from riido_pg import ConflictingOptions, Ranking
from riido_pg.api import DEFAULT_TEXT_CONFIG, NO_WORDS
from riido_pg.cli.options import (
    AllOpt,
    Format,
    FormatOpt,
    HintsFile,
    IdentifierHints,
    LimitOpt,
    ModelOpt,
    ModelRankingOpt,
    PolicyOpt,
    SnapshotArg,
    TextConfig,
)
from riido_pg.cli.output import emit_json, note
from riido_pg.cli.policy import policy_from_options
from riido_pg.cli.settings import database

__all__ = ["NO_WORDS", "NO_WORDS_HINTED", "TABLE_ROWS", "hints", "query"]

#: Candidates ``query`` gives (a table's rows, the JSON's candidates) when neither
#: --limit nor --all is given.
TABLE_ROWS = 10

#: The same, when hints (a hints file's or a model's) reorder the zeros.
NO_WORDS_HINTED = (
    "the query has no searchable words (empty, or only stop words for this text "
    "configuration): every document scores 0; the first in id order leads, then the "
    "{source}'s suggestions alternate with the rest in id order"
)


def _noted(ranking: Ranking, *, hints: list[str] | None, policy: str) -> Ranking:
    from riido_pg.api import policies

    if not ranking.searchable:
        # the model's hints interleaved (the policy --model chooses alone)
        if any(p.name == policy and p.flag == "--model" for p in policies()):
            note(NO_WORDS_HINTED.format(source="model"))
        elif hints is not None:
            note(NO_WORDS_HINTED.format(source="hints file"))
        else:
            note(NO_WORDS)
    return ranking


def hints(
    ctx: typer.Context,
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    text_config: TextConfig = DEFAULT_TEXT_CONFIG,
    limit: LimitOpt = None,
    model: ModelOpt = None,
    model_ranking: ModelRankingOpt = None,
) -> None:
    """Rank the documents given as JSON on stdin; keeps nothing.

    stdin: {"snapshot_id": ..., "query": ..., "documents": [{"id": ..., "text": ...}]}.
    Prints the result JSON with every candidate (the first N with --limit N).
    """
    from riido_pg.api import read_request

    chosen = policy_from_options(identifier_hints, hints_file, policy, model, model_ranking)
    if sys.stdin.isatty():
        raise ConflictingOptions("hints reads a JSON request on stdin; pipe one in")
    request = read_request(sys.stdin.buffer)
    with database(ctx) as db:
        ranking = db.rank_documents(
            request,
            policy=chosen.policy,
            text_config=text_config,
            limit=limit,
            hints=chosen.hints,
            model=model,
        )
    emit_json(_noted(ranking, hints=chosen.hints, policy=chosen.policy).to_dict())


def query(
    ctx: typer.Context,
    snapshot_id: SnapshotArg,
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
    identifier_hints: IdentifierHints = False,
    hints_file: HintsFile = None,
    policy: PolicyOpt = None,
    limit: LimitOpt = None,
    every: AllOpt = False,
    fmt: FormatOpt = None,
    model: ModelOpt = None,
    model_ranking: ModelRankingOpt = None,
) -> None:
    """Rank a stored snapshot for a question.

    The first 10 candidates (--limit N for N, --all for every one): on a terminal a
    table, piped or with --format json the result JSON, whose "total" says how many
    candidates there were in all.
    """
    if limit is not None and every:
        raise ConflictingOptions("--limit and --all cannot be used together")
    shown = fmt or (Format.table if sys.stdout.isatty() else Format.json)
    chosen = policy_from_options(identifier_hints, hints_file, policy, model, model_ranking)
    cut = None if every else TABLE_ROWS if limit is None else limit
    with database(ctx) as db:
        ranking = db.rank(
            snapshot_id,
            query_text,
            policy=chosen.policy,
            limit=cut,
            hints=chosen.hints,
            model=model,
        )
    _noted(ranking, hints=chosen.hints, policy=chosen.policy)
    if shown is Format.json:
        emit_json({**ranking.to_dict(), "total": ranking.total})
        return
    from riido_pg.cli.tables import print_ranking

    print_ranking(ranking, more_hint=cut == TABLE_ROWS and limit is None)
