"""A corpus of independent questions from a repository's own history.

Each question is a commit's subject; its snapshot is the tree of the commit's
parent; its targets are the functions of that tree the commit changed
(``riido-pg corpus history``, README "Evaluation"). The modules: ``subjects``
(which subjects are questions), ``diffs`` and ``targets`` (which functions a
commit changed), ``build`` (reading the history), ``corpus`` (the directory's
format, reading it back), ``snapshots`` (a snapshot's documents, from the
repository) and ``output`` (writing the directory whole or not at all).

For an evaluation::

    corpus = read_history_corpus(directory)
    for snapshot_id in corpus.snapshots:
        load_snapshot(conn, snapshot_id, snapshot_documents(corpus, snapshot_id))
        for question in corpus.questions_of(snapshot_id):
            ...  # rank question.text in snapshot_id; question.targets are its targets
"""

from riido_pg.corpora.history.build import (
    DEFAULT_MAX,
    DEFAULT_MAX_TARGETS,
    HistoryOptions,
    HistoryStats,
    build,
)
from riido_pg.corpora.history.corpus import (
    MANIFEST_FILE,
    Extraction,
    HistoryCorpus,
    HistoryQuestion,
    is_history_corpus,
    read_history_corpus,
)
from riido_pg.corpora.history.snapshots import snapshot_documents
from riido_pg.corpora.history.subjects import RULES_VERSION

__all__ = [
    "DEFAULT_MAX",
    "DEFAULT_MAX_TARGETS",
    "MANIFEST_FILE",
    "RULES_VERSION",
    "Extraction",
    "HistoryCorpus",
    "HistoryOptions",
    "HistoryQuestion",
    "HistoryStats",
    "build",
    "is_history_corpus",
    "read_history_corpus",
    "snapshot_documents",
]
