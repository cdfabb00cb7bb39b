"""Options and arguments more than one command takes, each declared once.

Values are checked by the parsers here, so a bad one is one ``error:`` line in the
house style (``--limit must be a whole number of at least 1, not '0'``), never a
validation library's wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from riido_pg.api import MAX_LIMIT, evaluated_policies, model_rankings, policies
from riido_pg.cli.errors import OptionError

__all__ = [
    "AllOpt",
    "Format",
    "FormatOpt",
    "HintsFile",
    "IdentifierHints",
    "LimitOpt",
    "ListFormatOpt",
    "ModelOpt",
    "PolicyOpt",
    "ShardOpt",
    "SnapshotArg",
    "TextConfig",
    "choice",
    "whole_number",
]

E = TypeVar("E", bound=StrEnum)


def whole_number(
    option: str, *, low: int = 1, high: int | None = None, ceiling: int | None = None
) -> Callable[[object], int]:
    """A parser of a whole number in ``[low, high]`` for ``option``; ``ceiling`` is a
    technical bound (the database's), named only to a value above it."""
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(value: object) -> int:
        text = str(value).strip(" \t\n\r\f\v")  # spaces around it, no control characters
        # no option takes a number of 100 digits (int() refuses 4,300)
        number = int(text) if re.fullmatch(r"-?[0-9]{1,100}", text) else None
        if number is None or number < low or (high is not None and number > high):
            raise OptionError(f"{option} must be a whole number {span}, not {value!r}")
        if ceiling is not None and number > ceiling:
            raise OptionError(f"{option} must be at most {ceiling:,}, not {value!r}")
        return number

    return parse


def choice(option: str, kind: type[E]) -> Callable[[object], E]:
    """A parser of one of ``kind``'s values for ``option``."""
    names = [k.value for k in kind]

    def parse(value: object) -> E:
        if isinstance(value, kind):
            return value
        if value not in names:
            raise OptionError(f"{option} must be {' or '.join(names)}, not {value!r}")
        return kind(value)

    return parse


class Format(StrEnum):
    table = "table"
    json = "json"


def _policy_help() -> str:
    alone = [p.name for p in policies() if not (p.needs_hints or p.needs_model)]
    return (
        "One of: " + ", ".join(alone) + " (default bm25). --identifier-hints, --hints-file "
        "and --model choose their own policy."
    )


def _eval_policy_help() -> str:
    return (
        "A policy to evaluate; repeat for several. One of: "
        + ", ".join(evaluated_policies(model=True))
        + " (the model's only with --model). Default: every one of them that the run can."
    )


SnapshotArg = Annotated[str, typer.Argument(metavar="SNAPSHOT", help="Snapshot id.")]
FormatOpt = Annotated[
    Format | None,
    typer.Option(
        "--format",
        metavar="FORMAT",
        parser=choice("--format", Format),
        help="table or json; default: a table on a terminal, JSON otherwise.",
        show_default=False,
    ),
]
#: ``--format`` of a listing (``snapshots list``, ``shards list``): a table unless json.
ListFormatOpt = Annotated[
    Format,
    typer.Option(
        "--format",
        metavar="FORMAT",
        parser=choice("--format", Format),
        help="table (the default) or json.",
        show_default=False,
    ),
]
IdentifierHints = Annotated[
    bool,
    typer.Option(
        "--identifier-hints",
        help="Interleave identifier-split BM25 hints, baseline first "
        "(policy identifier_bm25_baseline_first).",
    ),
]
HintsFile = Annotated[
    Path | None,
    typer.Option(
        "--hints-file",
        metavar="FILE",
        help="A JSON array of document ids in hint order, interleaved baseline first "
        "(policy external_hints_baseline_first).",
        show_default=False,
    ),
]
PolicyOpt = Annotated[
    str | None,
    typer.Option("--policy", metavar="POLICY", help=_policy_help(), show_default=False),
]
EvalPolicyOpt = Annotated[
    list[str] | None,
    typer.Option("--policy", metavar="POLICY", help=_eval_policy_help(), show_default=False),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="NAME",
        help="A learned hint source, e.g. wordllama-256 (policy model_hints_baseline_first; "
        "--model-ranking weighted: model_structure_weighted).",
        show_default=False,
    ),
]


def _model_ranking_help() -> str:
    rankings = model_rankings()
    return (
        "How --model ranks: "
        + "; ".join(f"{value} (policy {name})" for value, name in rankings.items())
        + ". Default: hints."
    )


ModelRankingOpt = Annotated[
    str | None,
    typer.Option(
        "--model-ranking",
        metavar="HOW",
        help=_model_ranking_help(),
        show_default=False,
    ),
]
TextConfig = Annotated[
    str,
    typer.Option("--text-config", metavar="CONFIG", help="PostgreSQL text search configuration."),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        metavar="N",
        parser=whole_number("--limit", ceiling=MAX_LIMIT),
        help="Only the first N candidates (exactly the first N of the full ranking).",
        show_default=False,
    ),
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every candidate, in any format.")]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        metavar="NAME",
        help="Place a new snapshot on this shard (default: the shard with the fewest documents).",
        show_default=False,
    ),
]
