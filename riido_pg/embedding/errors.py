"""Errors of the learned hint source (all exit 2: the user picks another model,
installs the extra, or asks another query)."""

from __future__ import annotations

from riido_pg.errors import InvalidInput

__all__ = ["EmptyEmbedding", "ModelNotInstalled", "UnknownModel"]


class UnknownModel(InvalidInput):
    """No model of that name is registered; the message lists the known ones."""


class ModelNotInstalled(InvalidInput):
    """The model's packages are not installed; the message names the pip command."""


class EmptyEmbedding(InvalidInput):
    """A text embeds to nothing (no token of it is in the model's vocabulary, or it is
    empty): it has no direction, so no cosine order can be computed for it."""
