"""The policy the command-line flags choose (``--policy``, ``--identifier-hints``,
``--hints-file``, ``--model`` and ``--model-ranking``) and the hint ids of a hints
file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chosen", "policy_from_options"]


@dataclass(frozen=True, slots=True)
class Chosen:
    policy: str
    hints: list[str] | None


def policy_from_options(
    identifier_hints: bool,
    hints_file: Path | None,
    policy: str | None,
    model: str | None,
    model_ranking: str | None = None,
) -> Chosen:
    """The policy the flags choose (the registry's rules: a flag excludes the other
    flags and any other ``--policy``; ``--model-ranking`` picks the learned policy
    ``--model`` ranks by) and the hints file's ids, read now."""
    from riido_pg.api import read_hints, select_policy

    given = (
        ("--identifier-hints", identifier_hints),
        ("--hints-file", hints_file is not None),
        ("--model", model is not None),
    )
    chosen = select_policy(policy, [flag for flag, on in given if on], model_ranking)
    return Chosen(chosen.name, read_hints(hints_file) if hints_file is not None else None)
