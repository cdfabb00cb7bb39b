"""The names of the ranked lists a policy combines (:mod:`riido_pg.ranking.policy`),
which the evaluation's scores are keyed by too (:mod:`riido_pg.evaluation.scoring`).

``raw``: BM25 over ``tsv_raw``; ``ident``: BM25 over ``tsv_ident``; ``name``: the name
field (:data:`riido_pg.ranking.bm25.NAME`); ``hints``: the caller's hint ids, in order;
``model``: a learned hint source's order; ``cosine``: a learned model's cosine between
the query and each document (its stored vector).
"""

from __future__ import annotations

from riido_pg.ranking import bm25

__all__ = ["COLUMNS", "COSINE", "HINTS", "IDENT", "MODEL", "NAME", "RAW"]

RAW = "raw"
IDENT = "ident"
NAME = bm25.NAME
HINTS = "hints"
MODEL = "model"
COSINE = "cosine"
#: The two body columns every snapshot has.
COLUMNS = (RAW, IDENT)
