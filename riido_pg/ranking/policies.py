"""The policies: every ranking policy declared once, with its behaviour.

A :class:`Policy` is a name, a one-line summary and a combiner
(:mod:`riido_pg.ranking.combiners`) that owns how its lists become one ranking —
for a stored snapshot, for ``hints`` and inside ``eval`` alike. :func:`resolve`
decides which policy actually runs for a query and under which label (the
``bm25`` fallbacks for queries outside a policy's scope), for every caller.
:func:`register_policy` adds a policy (an application's own combination, say), and
:func:`policies` lists them in declaration order, which is README "Policies"' order.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from riido_pg.errors import ConflictingOptions, Hint
from riido_pg.ranking.combiners import (
    HINTS,
    IDENT,
    MODEL,
    NAME,
    RAW,
    Combiner,
    Fused,
    Interleave,
    ReciprocalRank,
    Single,
    Structure,
)
from riido_pg.ranking.terms import QueryTerms

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
    "IDENTIFIER_BM25_RRF",
    "LABELS",
    "MODEL",
    "MODEL_HINTS_BASELINE_FIRST",
    "MODEL_OUT_OF_SCOPE",
    "OUT_OF_SCOPE",
    "RAW",
    "RRF_K",
    "STRUCTURE_BM25",
    "STRUCTURE_EXAMPLE_PRIOR",
    "STRUCTURE_NAME_MATCH",
    "STRUCTURE_TEST_PRIOR",
    "STRUCTURE_W_IDENT",
    "STRUCTURE_W_NAME",
    "Policy",
    "check_hints",
    "check_weight",
    "evaluated_policies",
    "get_policy",
    "policies",
    "register_policy",
    "resolve",
    "select_policy",
]

BM25 = "bm25"
IDENTIFIER_BM25 = "identifier_bm25"
IDENTIFIER_BM25_BASELINE_FIRST = "identifier_bm25_baseline_first"
IDENTIFIER_BM25_AUXILIARY_FIRST = "identifier_bm25_auxiliary_first"
EXTERNAL_HINTS_BASELINE_FIRST = "external_hints_baseline_first"
IDENTIFIER_BM25_FUSED = "identifier_bm25_fused"
IDENTIFIER_BM25_RRF = "identifier_bm25_rrf"
MODEL_HINTS_BASELINE_FIRST = "model_hints_baseline_first"
STRUCTURE_BM25 = "structure_bm25"
#: w of identifier_bm25_fused: a constant chosen on the development corpora (cosqa-dev
#: and docproxy, README "Choosing the fused weight"), not learned per snapshot.
FUSED_WEIGHT = 4.0
#: k of identifier_bm25_rrf, chosen on the development corpora (cosqa-dev and
#: docproxy; docs/evaluation.md "Choosing the fused weight" has the sweep): MRR is flat
#: for k from 0 to 2 and falls beyond, so not the customary 60.
RRF_K = 1.0
#: structure_bm25's constants, chosen on the development corpora only (cosqa-dev,
#: docproxy and the history corpora of docs/evaluation.md "Ranking with structure";
#: bench/structure.py has the sweep): the identifier column's weight, the name
#: field's weight, the factor of a document's score when the question holds every
#: lexeme of its qualified name (``Structure``), the factor of a test document's
#: score when the question is not
#: about tests, and that of documentation, example or benchmark code when the
#: question is not about those.
STRUCTURE_W_IDENT = 6.0
STRUCTURE_W_NAME = 6.0
STRUCTURE_NAME_MATCH = 1.75
STRUCTURE_TEST_PRIOR = 0.3
STRUCTURE_EXAMPLE_PRIOR = 0.5
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
    #: How its lists become one ranking.
    combiner: Combiner
    #: One line for ``--help`` and the README.
    summary: str
    #: The command-line flag that selects this policy on its own, if any. A flag
    #: excludes every other flag and any ``--policy`` naming another policy.
    flag: str | None = None

    @property
    def lists(self) -> tuple[str, ...]:
        return self.combiner.lists

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
    def weighted(self) -> bool:
        """A caller may give it another fused weight (``fused_weight=``)."""
        return isinstance(self.combiner, Fused)

    @property
    def evaluated(self) -> bool:
        """``eval`` can run it: it needs nothing per question beyond the question
        (a model policy runs when ``eval --model`` names the model)."""
        return not self.needs_hints

    @property
    def fused(self) -> bool:
        """It ranks by a score of its own (a fusion of the two columns)."""
        return self.combiner.score_name is not None


_REGISTRY: dict[str, Policy] = {}
_LOCK = threading.Lock()


def register_policy(policy: Policy) -> Policy:
    """Add ``policy`` to the registry (its name must be new); returns it."""
    with _LOCK:
        if policy.name in _REGISTRY or policy.name in LABELS:
            raise ValueError(f"policy {policy.name!r} is declared twice")
        if not 1 <= len(policy.lists) <= 3 or not set(policy.lists) <= {
            RAW,
            IDENT,
            NAME,
            HINTS,
            MODEL,
        }:
            raise ValueError(
                f"policy {policy.name!r}: lists must be one to three of raw, ident, name, "
                "hints, model"
            )
        _REGISTRY[policy.name] = policy
    return policy


def policies() -> tuple[Policy, ...]:
    """Every policy, in declaration order."""
    return tuple(_REGISTRY.values())


register_policy(Policy(BM25, Single(RAW), "BM25 over the raw column (the default)"))
register_policy(
    Policy(IDENTIFIER_BM25, Single(IDENT), "BM25 over the identifier-split column alone")
)
register_policy(
    Policy(
        IDENTIFIER_BM25_BASELINE_FIRST,
        Interleave(RAW, IDENT),
        "interleave bm25 (first) with identifier_bm25",
        flag="--identifier-hints",
    )
)
register_policy(
    Policy(
        IDENTIFIER_BM25_AUXILIARY_FIRST,
        Interleave(IDENT, RAW),
        "interleave identifier_bm25 (first) with bm25",
    )
)
register_policy(
    Policy(
        IDENTIFIER_BM25_FUSED,
        Fused(FUSED_WEIGHT),
        f"one ranking by bm25 + w * identifier_bm25 (w = {FUSED_WEIGHT:g})",
    )
)
register_policy(
    Policy(
        IDENTIFIER_BM25_RRF,
        ReciprocalRank(RRF_K),
        f"reciprocal rank fusion of bm25 and identifier_bm25 (k = {RRF_K:g})",
    )
)
register_policy(
    Policy(
        STRUCTURE_BM25,
        Structure(
            STRUCTURE_W_IDENT,
            STRUCTURE_W_NAME,
            STRUCTURE_TEST_PRIOR,
            STRUCTURE_EXAMPLE_PRIOR,
            STRUCTURE_NAME_MATCH,
        ),
        f"bm25 + {STRUCTURE_W_IDENT:g} * identifier_bm25 + {STRUCTURE_W_NAME:g} * name_bm25, "
        f"x {STRUCTURE_NAME_MATCH:g} when the question holds every word of the qualified name, "
        f"test code x {STRUCTURE_TEST_PRIOR:g} unless the question is about tests, "
        f"documentation and example code x {STRUCTURE_EXAMPLE_PRIOR:g} unless it is about them",
    )
)
register_policy(
    Policy(
        EXTERNAL_HINTS_BASELINE_FIRST,
        Interleave(RAW, HINTS),
        "interleave bm25 (first) with the caller's hint ids",
        flag="--hints-file",
    )
)
register_policy(
    Policy(
        MODEL_HINTS_BASELINE_FIRST,
        Interleave(RAW, MODEL),
        "interleave bm25 (first) with a learned model's cosine order",
        flag="--model",
    )
)


def evaluated_policies(model: bool = False) -> tuple[str, ...]:
    """The policies ``eval`` runs by default, in table order (the model policies only
    when a model is named)."""
    return tuple(p.name for p in policies() if p.evaluated and (model or not p.needs_model))


def get_policy(name: str) -> Policy:
    """The declared policy ``name``, or ConflictingOptions listing the choices."""
    if name in LABELS:
        raise ConflictingOptions(f"{name} is a result label, not a policy to ask for")
    policy = _REGISTRY.get(name)
    if policy is None:
        names = ", ".join(p.name for p in policies())
        raise ConflictingOptions(f"unknown policy {name!r}; choose one of {names}")
    return policy


def resolve(policy: Policy, terms: QueryTerms, *, embedded: bool = True) -> tuple[Policy, str]:
    """The policy that actually ranks a query, and the label the result carries:
    ``bm25`` under :data:`OUT_OF_SCOPE` when an identifier policy meets a query
    outside the identifier limits, under :data:`MODEL_OUT_OF_SCOPE` when a model
    policy's query embeds to nothing (``embedded`` false); else the policy itself."""
    if policy.identifier and not terms.identifier_in_scope:
        return _REGISTRY[BM25], OUT_OF_SCOPE
    if policy.needs_model and not embedded:
        return _REGISTRY[BM25], MODEL_OUT_OF_SCOPE
    return policy, policy.name


def check_weight(policy: Policy, value: float | None) -> float | None:
    """A caller's fused weight: finite, >= 0, and only for a weighted policy."""
    if value is None:
        return None
    if not policy.weighted:
        raise ConflictingOptions(f"a fused weight applies to fused policies, not {policy.name}")
    if not (value >= 0 and math.isfinite(value)):
        raise ConflictingOptions(f"the fused weight must be a finite number >= 0, not {value}")
    return float(value)


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
        chosen = next(p for p in policies() if p.flag == flag)
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
