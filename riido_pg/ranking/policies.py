"""The policy registry: every ranking policy declared once.

A policy names the ranked lists it draws from and how it combines them:

* one list: that list's ranking as it is;
* two lists: :func:`riido_pg.ranking.interleave.iter_interleave` of the two, the
  first list's id first (baseline-first when the first list is ``raw``);
* two lists with a ``weight`` w: one ranking by the fused score
  ``raw + w * ident`` (``sql/rank_fused.sql``; the evaluation adds the same floats).

The lists are ``raw`` (BM25 over ``tsv_raw``), ``ident`` (BM25 over ``tsv_ident``),
``hints`` (the caller's hint ids, in order) and ``model`` (a learned hint source's
order: :mod:`riido_pg.ranking.model_hints`). The CLI, :func:`rank_snapshot`,
:func:`rank_documents` and ``eval`` all read this registry; adding a policy is one
:class:`Policy` declaration here (plus, for a new kind of list, one function where
lists are computed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from riido_pg.errors import ConflictingOptions, Hint

__all__ = [
    "BM25",
    "EXTERNAL_HINTS_BASELINE_FIRST",
    "FUSED_WEIGHT",
    "HINTS",
    "IDENT",
    "IDENTIFIER_BM25",
    "IDENTIFIER_BM25_AUXILIARY_FIRST",
    "IDENTIFIER_BM25_BASELINE_FIRST",
    "IDENTIFIER_BM25_FUSED",
    "LABELS",
    "MODEL",
    "MODEL_HINTS_BASELINE_FIRST",
    "MODEL_OUT_OF_SCOPE",
    "OUT_OF_SCOPE",
    "POLICIES",
    "RAW",
    "REGISTRY",
    "Policy",
    "check_weight",
    "evaluated_policies",
    "get_policy",
    "select_policy",
]

#: The ranked lists a policy can draw from.
RAW = "raw"
IDENT = "ident"
HINTS = "hints"
MODEL = "model"

BM25 = "bm25"
IDENTIFIER_BM25 = "identifier_bm25"
IDENTIFIER_BM25_BASELINE_FIRST = "identifier_bm25_baseline_first"
IDENTIFIER_BM25_AUXILIARY_FIRST = "identifier_bm25_auxiliary_first"
EXTERNAL_HINTS_BASELINE_FIRST = "external_hints_baseline_first"
IDENTIFIER_BM25_FUSED = "identifier_bm25_fused"
MODEL_HINTS_BASELINE_FIRST = "model_hints_baseline_first"
#: w of identifier_bm25_fused: a constant chosen on the development corpora (cosqa-dev
#: and docproxy, README "Choosing the fused weight"), not learned per snapshot.
FUSED_WEIGHT = 4.0
#: A result label, not a policy: identifier hints were asked for, but the query is
#: outside the identifier limits or has no searchable words; ``bm25`` was ranked.
OUT_OF_SCOPE = "bm25_identifier_input_out_of_scope"
#: A result label: model hints were asked for, but the query embeds to nothing under
#: the model (blank, or no token the model knows); ``bm25`` was ranked.
MODEL_OUT_OF_SCOPE = "bm25_model_input_out_of_scope"
LABELS = (OUT_OF_SCOPE, MODEL_OUT_OF_SCOPE)


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    #: One list (ranked as is) or two (interleaved, the first list's id first).
    lists: tuple[str, ...]
    #: One line for ``--help`` and the README.
    summary: str
    #: The command-line flag that selects this policy on its own, if any. A flag
    #: excludes every other flag and any ``--policy`` naming another policy.
    flag: str | None = None
    #: With two lists: fuse them into one ranking by ``first + weight * second``
    #: instead of interleaving them (the default weight; callers may pass another).
    weight: float | None = None

    @property
    def fused(self) -> bool:
        return self.weight is not None

    @property
    def needs_hints(self) -> bool:
        """The caller supplies the hint list (``--hints-file``, ``hints=``)."""
        return HINTS in self.lists

    @property
    def needs_model(self) -> bool:
        """The caller names a learned hint source (``--model``, ``model=``)."""
        return MODEL in self.lists

    @property
    def identifier(self) -> bool:
        """Draws on the identifier column: falls back to ``bm25`` (labelled
        :data:`OUT_OF_SCOPE`) for a query outside the identifier limits."""
        return IDENT in self.lists

    @property
    def evaluated(self) -> bool:
        """``eval`` can run it: it needs nothing per question beyond the question
        (a model policy runs when ``eval --model`` names the model)."""
        return not self.needs_hints


REGISTRY: dict[str, Policy] = {}


def _declare(policy: Policy) -> Policy:
    if policy.name in REGISTRY or policy.name in LABELS:
        raise ValueError(f"policy {policy.name!r} is declared twice")
    if not 1 <= len(policy.lists) <= 2 or not set(policy.lists) <= {RAW, IDENT, HINTS, MODEL}:
        raise ValueError(
            f"policy {policy.name!r}: lists must be one or two of raw, ident, hints, model"
        )
    if policy.fused and policy.lists != (RAW, IDENT):
        raise ValueError(f"policy {policy.name!r}: only raw and ident scores can be fused")
    REGISTRY[policy.name] = policy
    return policy


_declare(Policy(BM25, (RAW,), "BM25 over the raw column (the default)"))
_declare(Policy(IDENTIFIER_BM25, (IDENT,), "BM25 over the identifier-split column alone"))
_declare(
    Policy(
        IDENTIFIER_BM25_BASELINE_FIRST,
        (RAW, IDENT),
        "interleave bm25 (first) with identifier_bm25",
        flag="--identifier-hints",
    )
)
_declare(
    Policy(
        IDENTIFIER_BM25_AUXILIARY_FIRST,
        (IDENT, RAW),
        "interleave identifier_bm25 (first) with bm25",
    )
)
_declare(
    Policy(
        IDENTIFIER_BM25_FUSED,
        (RAW, IDENT),
        f"one ranking by bm25 + w * identifier_bm25 (w = {FUSED_WEIGHT:g})",
        weight=FUSED_WEIGHT,
    )
)
_declare(
    Policy(
        EXTERNAL_HINTS_BASELINE_FIRST,
        (RAW, HINTS),
        "interleave bm25 (first) with the caller's hint ids",
        flag="--hints-file",
    )
)

_declare(
    Policy(
        MODEL_HINTS_BASELINE_FIRST,
        (RAW, MODEL),
        "interleave bm25 (first) with a learned model's cosine order",
        flag="--model",
    )
)

#: Policy names a caller can ask for, in declaration (README table) order.
POLICIES: tuple[str, ...] = tuple(REGISTRY)


def evaluated_policies(model: bool = False) -> tuple[str, ...]:
    """The policies ``eval`` runs by default, in table order (the model policies only
    when a model is named)."""
    return tuple(p.name for p in REGISTRY.values() if p.evaluated and (model or not p.needs_model))


def get_policy(name: str) -> Policy:
    """The declared policy ``name``, or ConflictingOptions listing the choices."""
    if name in LABELS:
        raise ConflictingOptions(f"{name} is a result label, not a policy to ask for")
    policy = REGISTRY.get(name)
    if policy is None:
        raise ConflictingOptions(f"unknown policy {name!r}; choose one of {', '.join(POLICIES)}")
    return policy


def check_weight(policy: Policy, weight: float | None) -> float | None:
    """The fusion weight to use: ``weight`` if given (finite, >= 0, and only for a
    fused policy), else the policy's own."""
    if weight is None:
        return policy.weight
    if not policy.fused:
        raise ConflictingOptions(f"a fused weight applies to fused policies, not {policy.name}")
    if not (weight >= 0 and weight != float("inf")):
        raise ConflictingOptions(f"the fused weight must be a finite number >= 0, not {weight}")
    return float(weight)


def check_hints(policy: Policy, hints: Sequence[str] | None, model: str | None = None) -> None:
    """Hints, and a model, are given exactly when the policy draws on them."""
    if policy.needs_hints and hints is None:
        raise ConflictingOptions(
            f"policy {policy.name} needs a list of hint ids",
            Hint("pass --hints-file FILE", "pass hints=[...]"),
        )
    if hints is not None and not policy.needs_hints:
        raise ConflictingOptions(f"hints cannot be used with policy {policy.name}")
    if policy.needs_model and model is None:
        raise ConflictingOptions(
            f"policy {policy.name} needs a model", Hint("pass --model NAME", "pass model=NAME")
        )
    if model is not None and not policy.needs_model:
        raise ConflictingOptions(
            f"a model is the policy {MODEL_HINTS_BASELINE_FIRST}; it cannot be used with "
            f"policy {policy.name}"
        )


def select_policy(name: str | None, flags: Sequence[str] = ()) -> Policy:
    """The policy chosen by ``--policy NAME`` and the policy flags given, or
    ConflictingOptions when they disagree (two flags; a flag and another policy)."""
    if len(flags) > 1:
        raise ConflictingOptions(f"{' and '.join(flags)} cannot be used together")
    if flags:
        (flag,) = flags
        chosen = next(p for p in REGISTRY.values() if p.flag == flag)
        if name is not None and name != chosen.name:
            raise ConflictingOptions(
                f"{flag} means {chosen.name}; it cannot be used with --policy {name}"
            )
        return chosen
    policy = get_policy(name or BM25)
    if policy.flag is not None and (policy.needs_hints or policy.needs_model):
        what = "FILE" if policy.needs_hints else "NAME"
        raise ConflictingOptions(f"--policy {policy.name} needs {policy.flag} {what}")
    return policy
