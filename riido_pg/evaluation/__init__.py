"""Evaluation: BEIR corpora in, stored as snapshots with questions (or history
corpora, each question in its own snapshot: :mod:`riido_pg.evaluation.history`);
every policy ranked for every question; Recall@1, Recall@10, MRR and mean
first-target rank out."""

from riido_pg.evaluation.batch import check_policies, evaluate
from riido_pg.evaluation.corpora import StoredCorpus, snapshot_id_for, store_corpus
from riido_pg.evaluation.result import Evaluation, QuestionResult
from riido_pg.evaluation.runfiles import DEFAULT_RUN_DEPTH

__all__ = [
    "DEFAULT_RUN_DEPTH",
    "Evaluation",
    "QuestionResult",
    "StoredCorpus",
    "check_policies",
    "evaluate",
    "snapshot_id_for",
    "store_corpus",
]
