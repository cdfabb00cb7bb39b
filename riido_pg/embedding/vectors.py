"""Pure vector helpers: normalising, cosine order, and the stored form of a vector.

Storage: ``bytea`` holding the float32 values little-endian, ``4 * dim`` bytes.
Chosen over ``real[]`` because it is the model's own dtype with no conversion (a
``real[]`` comes back through psycopg as a Python list of floats, one object per
component, ~20x slower to turn into a matrix than ``numpy.frombuffer`` on bytes), it
is the same size on disk (``real[]`` adds a 24-byte array header), it round-trips
bit for bit, and its dimension is checked by its length. Nothing in SQL needs to
read the components: cosine is computed in Python on the fetched matrix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "Matrix",
    "Vector",
    "cosine_order",
    "cosine_scores",
    "from_bytea",
    "l2_normalise",
    "matrix_from_bytea",
    "to_bytea",
]

Vector = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]

_LE_F32 = np.dtype("<f4")


def l2_normalise(rows: npt.ArrayLike) -> tuple[Matrix, npt.NDArray[np.bool_]]:
    """Rows scaled to unit length, float32, and a mask of the rows that were all zero
    (left as zeros: they have no direction)."""
    m = np.asarray(rows, dtype=np.float32)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-d array, got shape {m.shape}")
    norms = np.linalg.norm(m.astype(np.float64), axis=1)
    empty = ~(norms > 0.0)  # also catches NaN norms
    safe = np.where(empty, 1.0, norms)
    out = (m / safe[:, None]).astype(np.float32)
    out[empty] = 0.0
    return out, empty


def cosine_scores(query_vec: npt.ArrayLike, doc_matrix: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """The dot product of a unit query with each unit row: their cosine similarity."""
    q = np.asarray(query_vec, dtype=np.float32).ravel()
    d = np.asarray(doc_matrix, dtype=np.float32)
    if d.ndim != 2 or d.shape[1] != q.shape[0]:
        raise ValueError(f"query of dim {q.shape[0]} against a matrix of shape {d.shape}")
    return d @ q


def cosine_order(
    query_vec: npt.ArrayLike,
    doc_matrix: npt.ArrayLike,
    candidates: Sequence[int] | npt.NDArray[np.integer] | None = None,
) -> list[int]:
    """Row indices of ``doc_matrix`` by decreasing cosine with ``query_vec``; equal
    scores in ascending index order. With ``candidates``, only those rows are ordered
    (each index once, in the same order rule). Expects unit rows and a unit query.
    """
    d = np.asarray(doc_matrix, dtype=np.float32)
    if candidates is None:
        idx = np.arange(d.shape[0], dtype=np.int64)
        scores = cosine_scores(query_vec, d)
    else:
        idx = np.unique(np.asarray(candidates, dtype=np.int64))  # sorted, deduplicated
        if idx.size and (idx[0] < 0 or idx[-1] >= d.shape[0]):
            raise IndexError("candidate index out of range")
        scores = cosine_scores(query_vec, d[idx])
    # idx ascending + a stable sort on -score: ties keep ascending index order
    order = np.argsort(-scores, kind="stable")
    return idx[order].tolist()  # type: ignore[no-any-return]


def to_bytea(vec: npt.ArrayLike) -> bytes:
    """A vector as stored: float32 little-endian bytes."""
    v = np.asarray(vec, dtype=np.float32).ravel()
    return v.astype(_LE_F32, copy=False).tobytes()


def from_bytea(data: bytes | bytearray | memoryview, dim: int) -> Vector:
    """A stored vector back; raises ValueError when its length is not ``4 * dim``."""
    if len(data) != 4 * dim:
        raise ValueError(f"a stored vector of {len(data)} bytes is not {dim} float32 values")
    return np.frombuffer(data, dtype=_LE_F32).astype(np.float32)


def matrix_from_bytea(rows: Iterable[bytes | bytearray | memoryview], dim: int) -> Matrix:
    """Stored vectors (one per document, in document order) as an (n, dim) matrix."""
    chunks = list(rows)
    for r in chunks:
        if len(r) != 4 * dim:
            raise ValueError(f"a stored vector of {len(r)} bytes is not {dim} float32 values")
    if not chunks:
        return np.zeros((0, dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(bytes(r) for r in chunks), dtype=_LE_F32)
    return flat.reshape(len(chunks), dim).astype(np.float32)
