"""WordLlama ``l2_supercat`` 256-d static token embeddings, read from the files the
``wordllama`` wheel ships (``weights/l2_supercat_256.safetensors``, 16 MB float16,
and ``tokenizers/l2_supercat_tokenizer_config.json``, a 32k Llama BPE).

The files are read directly with ``tokenizers`` and ``safetensors`` rather than
through ``WordLlama.load()``, which looks for the tokenizer in a folder that does not
exist in the wheel and then goes to the network, and whose import configures the
root logger (``logging.basicConfig(level=INFO)``). The vector is what
``WordLlamaInference.embed(norm=True)`` computes: the mean of the text's token
vectors (no special tokens, no truncation), L2-normalised; averaging and summing
give the same unit vector, so the tokens are summed through a sparse count matrix.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from riido_pg.embedding.errors import ModelNotInstalled
from riido_pg.embedding.vectors import Matrix, l2_normalise

__all__ = ["WORDLLAMA_NAME", "WordLlamaModel", "load_wordllama", "wordllama_files"]

WORDLLAMA_NAME = "wordllama-256"
INSTALL_HINT = "pip install 'riido-pg[model]' (in a checkout of riido-pg: pip install '.[model]')"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
#: Texts tokenized and pooled per step: bounds the token x dim scratch memory.
BATCH = 512


def _not_installed(what: str) -> ModelNotInstalled:
    return ModelNotInstalled(
        f"model {WORDLLAMA_NAME!r} needs {what}, which is not installed: {INSTALL_HINT}"
    )


def wordllama_files() -> tuple[Path, Path]:
    """(weights, tokenizer) inside the installed ``wordllama`` package, found without
    importing it."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise _not_installed("the wordllama package")
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
    for f in (weights, tokenizer):
        if not f.is_file():
            raise ModelNotInstalled(
                f"model {WORDLLAMA_NAME!r}: the installed wordllama has no {f.name} "
                f"(expected {f}); reinstall it with {INSTALL_HINT}"
            )
    return weights, tokenizer


class WordLlamaModel:
    """Mean-pooled static token embeddings (see the module docstring)."""

    def __init__(self, tokenizer: Any, table: Matrix, name: str = WORDLLAMA_NAME) -> None:
        self._tokenizer = tokenizer
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Matrix:
        import scipy.sparse as sp

        vocab, dim = self._table.shape
        out = np.empty((len(texts), dim), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            chunk = list(texts[start : start + BATCH])
            encs = self._tokenizer.encode_batch(chunk, add_special_tokens=False)
            lengths = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
            indptr = np.zeros(len(encs) + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
            ids = np.fromiter(
                (i for e in encs for i in e.ids), dtype=np.int64, count=int(indptr[-1])
            )
            np.clip(ids, 0, vocab - 1, out=ids)  # as wordllama does
            counts = sp.csr_matrix(
                (np.ones(ids.size, dtype=np.float32), ids, indptr), shape=(len(encs), vocab)
            )
            out[start : start + len(chunk)] = counts @ self._table
        normalised, _ = l2_normalise(out)
        return normalised


def load_wordllama() -> WordLlamaModel:
    """The model from the installed wheel's files; no network."""
    weights, tokenizer_file = wordllama_files()
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise _not_installed(exc.name or "tokenizers and safetensors") from exc
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    with safe_open(str(weights), framework="np", device="cpu") as f:
        table = np.asarray(f.get_tensor(_TENSOR), dtype=np.float32)
    return WordLlamaModel(tokenizer, table)
