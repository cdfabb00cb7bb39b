"""The policy registry: every ranking policy declared once, with its behaviour.

A :class:`Policy` is a name, a one-line summary and a combiner that owns how its
lists become one ranking — for a stored snapshot, for ``hints`` and inside ``eval``
alike; each policy family is one module of :mod:`riido_pg.ranking.policy`, which
declares its parameters and its policies. :func:`resolve` decides which policy
actually runs for a query and under which label (the ``bm25`` fallbacks for queries
outside a policy's scope), for every caller; :func:`configure` gives a policy's
parameters other values (``params=``, ``fused_weight=``). :func:`register_policy`
adds a policy (an application's own module, say), and :func:`policies` lists them in
declaration order, which is docs/specification.md "Policies"' order.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence

from riido_pg.errors import ConflictingOptions, Hint
from riido_pg.ranking.policy import (
    fused,
    hinted,
    interleaved,
    model_weighted,
    rrf,
    single,
    structure,
)
from riido_pg.ranking.policy.fused import FUSED_WEIGHT, IDENTIFIER_BM25_FUSED, WEIGHT
from riido_pg.ranking.policy.hinted import (
    EXTERNAL_HINTS_BASELINE_FIRST,
    MODEL_HINTS_BASELINE_FIRST,
)
from riido_pg.ranking.policy.interleaved import (
    IDENTIFIER_BM25_AUXILIARY_FIRST,
    IDENTIFIER_BM25_BASELINE_FIRST,
)
from riido_pg.ranking.policy.model_weighted import (
    MODEL_DEPTH,
    MODEL_STRUCTURE_WEIGHTED,
    MODEL_WEIGHT,
)
from riido_pg.ranking.policy.rrf import IDENTIFIER_BM25_RRF, RRF_K
from riido_pg.ranking.policy.single import BM25, IDENTIFIER_BM25
from riido_pg.ranking.policy.skeleton import (
    COSINE,
    HINTS,
    IDENT,
    MODEL,
    NAME,
    RAW,
    Param,
    Policy,
)
from riido_pg.ranking.policy.structure import (
    STRUCTURE_BM25,
    STRUCTURE_CHANGE_PRIOR,
    STRUCTURE_EXAMPLE_PRIOR,
    STRUCTURE_HISTORY_PRIOR,
    STRUCTURE_LENGTH_PRIOR,
    STRUCTURE_NAME_MATCH,
    STRUCTURE_RECENT_PRIOR,
    STRUCTURE_TEST_PRIOR,
    STRUCTURE_W_IDENT,
    STRUCTURE_W_NAME,
)
from riido_pg.ranking.terms import QueryTerms

__all__ = [
    "BM25",
    "COSINE",
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
    "MODEL_DEPTH",
    "MODEL_HINTS_BASELINE_FIRST",
    "MODEL_OUT_OF_SCOPE",
    "MODEL_STRUCTURE_OUT_OF_SCOPE",
    "MODEL_STRUCTURE_WEIGHTED",
    "MODEL_WEIGHT",
    "NAME",
    "OUT_OF_SCOPE",
    "RAW",
    "RRF_K",
    "STRUCTURE_BM25",
    "STRUCTURE_CHANGE_PRIOR",
    "STRUCTURE_EXAMPLE_PRIOR",
    "STRUCTURE_HISTORY_PRIOR",
    "STRUCTURE_LENGTH_PRIOR",
    "STRUCTURE_NAME_MATCH",
    "STRUCTURE_RECENT_PRIOR",
    "STRUCTURE_TEST_PRIOR",
    "STRUCTURE_W_IDENT",
    "STRUCTURE_W_NAME",
    "Policy",
    "check_hints",
    "configure",
    "configure_each",
    "evaluated_policies",
    "get_policy",
    "model_rankings",
    "policies",
    "policy_params",
    "register_policy",
    "resolve",
    "select_policy",
]

#: A result label, not a policy: identifier hints were asked for, but the query is
#: outside the identifier limits or has no searchable words; ``bm25`` was ranked.
OUT_OF_SCOPE = "bm25_identifier_input_out_of_scope"
#: A result label: model hints were asked for, but the query embeds to nothing under
#: the model (blank, or no token the model knows); ``bm25`` was ranked.
MODEL_OUT_OF_SCOPE = "bm25_model_input_out_of_scope"
#: A result label: ``model_structure_weighted`` was asked for, but the query embeds to
#: nothing under the model; ``structure_bm25`` was ranked.
MODEL_STRUCTURE_OUT_OF_SCOPE = "structure_bm25_model_input_out_of_scope"
LABELS = (OUT_OF_SCOPE, MODEL_OUT_OF_SCOPE, MODEL_STRUCTURE_OUT_OF_SCOPE)


_REGISTRY: dict[str, Policy] = {}
_LOCK = threading.Lock()


def register_policy(policy: Policy) -> Policy:
    """Add ``policy`` to the registry (its name must be new); returns it."""
    with _LOCK:
        if policy.name in _REGISTRY or policy.name in LABELS:
            raise ValueError(f"policy {policy.name!r} is declared twice")
        if not 1 <= len(policy.lists) <= 4 or not set(policy.lists) <= {
            RAW,
            IDENT,
            NAME,
            HINTS,
            MODEL,
            COSINE,
        }:
            raise ValueError(
                f"policy {policy.name!r}: lists must be one to four of raw, ident, name, "
                "hints, model, cosine"
            )
        if policy.needs_model and policy.fallback_label not in LABELS:
            raise ValueError(
                f"policy {policy.name!r}: a model policy falls back to bm25 or structure_bm25"
            )
        _REGISTRY[policy.name] = policy
    return policy


def policies() -> tuple[Policy, ...]:
    """Every policy, in declaration order."""
    return tuple(_REGISTRY.values())


for _module in (single, interleaved, fused, rrf, structure, hinted, model_weighted):
    for _policy in _module.POLICIES:
        register_policy(_policy)


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
    outside the identifier limits; when a model policy's query embeds to nothing
    (``embedded`` false), its fallback (``bm25`` under :data:`MODEL_OUT_OF_SCOPE`,
    ``structure_bm25`` under :data:`MODEL_STRUCTURE_OUT_OF_SCOPE`); else the policy
    itself."""
    if policy.identifier and not terms.identifier_in_scope:
        return _REGISTRY[BM25], OUT_OF_SCOPE
    if policy.needs_model and not embedded:
        return _REGISTRY[policy.model_fallback], policy.fallback_label
    return policy, policy.name


def policy_params(
    fused_weight: float | None, params: Mapping[str, float] | None
) -> dict[str, float]:
    """The parameter values a caller gave: ``params``, and ``fused_weight`` as the
    fused policy's ``weight`` (the older spelling, kept)."""
    given = dict(params or {})
    if fused_weight is not None:
        given[WEIGHT] = fused_weight
    return given


def _declared(policy: Policy, name: str) -> Param:
    found = next((p for p in policy.params if p.name == name), None)
    if found is None:
        if name == WEIGHT:
            raise ConflictingOptions(f"a fused weight applies to fused policies, not {policy.name}")
        raise ConflictingOptions(f"policy {policy.name} has no parameter {name!r}")
    return found


def configure(policy: Policy, params: Mapping[str, float] | None) -> Policy:
    """``policy`` with the parameter values ``params`` gives (each declared by it and
    checked: ConflictingOptions otherwise); the policy itself when none is given."""
    if not params:
        return policy
    for name, value in params.items():
        _declared(policy, name).checked(value)
    return dataclasses.replace(policy, combiner=policy.combiner.configured(params))


def configure_each(chosen: Sequence[Policy], params: Mapping[str, float]) -> tuple[Policy, ...]:
    """Each of ``chosen`` with the values of ``params`` it declares (an evaluation's:
    every parameter given must be declared by one of them at least)."""
    for name in params:
        if not any(p.name == name for policy in chosen for p in policy.params):
            if name == WEIGHT:
                raise ConflictingOptions(
                    "a fused weight needs a fused policy among those evaluated"
                )
            raise ConflictingOptions(f"no policy evaluated has a parameter {name!r}")
    return tuple(
        configure(policy, {k: v for k, v in params.items() if k in {p.name for p in policy.params}})
        for policy in chosen
    )


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
        learned = " or ".join(p.name for p in policies() if p.needs_model)
        raise ConflictingOptions(
            f"a model ranks under policy {learned}; it cannot be used with policy {policy.name}"
        )


def model_rankings() -> dict[str, str]:
    """``--model-ranking`` values and the learned policy each selects with ``--model``."""
    return {p.model_ranking: p.name for p in policies() if p.model_ranking is not None}


def select_policy(
    name: str | None, flags: Sequence[str] = (), model_ranking: str | None = None
) -> Policy:
    """The policy chosen by ``--policy NAME``, the policy flags given and
    ``--model-ranking`` (with ``--model``: which learned policy), or
    ConflictingOptions when they disagree (two flags; a flag and another policy;
    ``--model-ranking`` without ``--model``)."""
    if len(flags) > 1:
        raise ConflictingOptions(f"{' and '.join(flags)} cannot be used together")
    if model_ranking is not None:
        rankings = model_rankings()
        if model_ranking not in rankings:
            raise ConflictingOptions(
                f"--model-ranking must be {' or '.join(rankings)}, not {model_ranking!r}"
            )
        if "--model" not in flags:
            raise ConflictingOptions("--model-ranking needs --model NAME")
    if flags:
        (flag,) = flags
        chosen = next(p for p in policies() if p.flag == flag)
        if model_ranking is not None:
            chosen = get_policy(model_rankings()[model_ranking])
            flag = f"{flag} with --model-ranking {model_ranking}"
        if name is not None and name != chosen.name:
            raise ConflictingOptions(
                f"{flag} means {chosen.name}; it cannot be used with --policy {name}"
            )
        return chosen
    policy = get_policy(name or BM25)
    if policy.flag is not None and (policy.needs_hints or policy.needs_model):
        what = "FILE" if policy.needs_hints else "NAME"
        raise ConflictingOptions(f"--policy {policy.name} needs {policy.flag} {what}")
    if policy.needs_model:
        raise ConflictingOptions(
            f"--policy {policy.name} needs --model NAME --model-ranking {policy.model_ranking}"
        )
    return policy
