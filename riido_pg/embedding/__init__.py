"""Learned hint source: document and query embeddings for ``--model NAME``.

Light to import: numpy only; a model's own packages are imported when it is loaded.

    model = load_model("wordllama-256")           # CheckedModel: .name .dim .embed
    docs = model.embed(texts)                      # (n, dim) float32, unit rows
    q = embed_query(model, "read config file")     # raises EmptyEmbedding if no token
    hints = cosine_order(q, docs)                  # row indices, ties by index
    stored = to_bytea(docs[0])                     # bytea, float32 little-endian
"""

from riido_pg.embedding.errors import EmptyEmbedding, ModelNotInstalled, UnknownModel
from riido_pg.embedding.model import CheckedModel, EmbeddingModel, embed_query
from riido_pg.embedding.registry import (
    ENTRY_POINT_GROUP,
    MODELS,
    ModelSpec,
    known_models,
    load_model,
    register_model,
    unregister_model,
)
from riido_pg.embedding.vectors import (
    cosine_order,
    cosine_scores,
    from_bytea,
    l2_normalise,
    matrix_from_bytea,
    to_bytea,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "MODELS",
    "CheckedModel",
    "EmbeddingModel",
    "EmptyEmbedding",
    "ModelNotInstalled",
    "ModelSpec",
    "UnknownModel",
    "cosine_order",
    "cosine_scores",
    "embed_query",
    "from_bytea",
    "known_models",
    "l2_normalise",
    "load_model",
    "matrix_from_bytea",
    "register_model",
    "to_bytea",
    "unregister_model",
]
