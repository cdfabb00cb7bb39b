"""What an embedding model is to riido-pg, and the checks every model goes through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from riido_pg.embedding.errors import EmptyEmbedding
from riido_pg.embedding.vectors import Matrix, Vector, l2_normalise

__all__ = ["CheckedModel", "EmbeddingModel", "embed_query"]


@runtime_checkable
class EmbeddingModel(Protocol):
    """A text embedder. ``embed`` returns one row per text, float32, shape
    ``(len(texts), dim)``. The rows of a loaded model (:func:`load_model`) are unit
    length, but a text that embeds to nothing gets a row of zeros."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


class CheckedModel:
    """A model as :func:`riido_pg.embedding.load_model` returns it: whatever the
    wrapped model returns is checked for shape, made float32 and L2-normalised (a
    user-registered model need not normalise). A blank text (empty once whitespace is
    stripped) is not passed to the model and gets a zero row, as does a text the model
    maps to the zero vector. ``last_empty`` holds the mask of the texts of the last
    ``embed`` call that embedded to nothing."""

    def __init__(self, inner: EmbeddingModel, name: str) -> None:
        self.inner = inner
        self._name = name
        self._dim = int(inner.dim)
        if self._dim < 1:
            raise ValueError(f"model {name!r} reports dimension {self._dim}")
        self.last_empty: np.ndarray = np.zeros(0, dtype=bool)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one str")
        if len(texts) == 0:
            self.last_empty = np.zeros(0, dtype=bool)
            return np.zeros((0, self._dim), dtype=np.float32)
        keep = [i for i, t in enumerate(texts) if t.strip()]
        raw = np.zeros((len(texts), self._dim), dtype=np.float32)
        if keep:
            got = np.asarray(self.inner.embed([texts[i] for i in keep]))
            if got.shape != (len(keep), self._dim):
                raise ValueError(
                    f"model {self._name!r} returned shape {got.shape} for {len(keep)} texts "
                    f"of dimension {self._dim}"
                )
            raw[keep] = got
        out, empty = l2_normalise(raw)
        self.last_empty = empty
        return out

    def __repr__(self) -> str:
        return f"CheckedModel({self._name!r}, dim={self._dim})"


def embed_query(model: EmbeddingModel, text: str) -> Vector:
    """The unit vector of one query; raises :class:`EmptyEmbedding` when the query
    embeds to nothing (so it has no cosine order: the caller keeps the baseline)."""
    row: Vector = np.asarray(model.embed([text]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(row.astype(np.float64)))
    if not norm > 0.0:
        raise EmptyEmbedding(
            f"the query {text[:60]!r} embeds to nothing under model {model.name!r} "
            "(it is blank, or no token of it is known to the model)"
        )
    if abs(norm - 1.0) > 1e-3:
        row = (row / norm).astype(np.float32)
    return row
