"""SQLAlchemy models of the ``riido`` schema.

They describe the schema for alembic (autogenerate must find no drift against the
migrations); the hot paths use plain SQL from ``sql/`` through psycopg.
A snapshot's own rows lead with ``snapshot_id``; its content lives in segments,
which snapshots share (README "Snapshots on a base").
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    Table,
    UniqueConstraint,
    func,
)
from sqlalchemy import Text as TextType
from sqlalchemy.dialects.postgresql import ARRAY, BYTEA, DOUBLE_PRECISION, TSVECTOR, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Base",
    "Commit",
    "Document",
    "EvalCorpus",
    "Placement",
    "Posting",
    "Question",
    "QuestionTarget",
    "Segment",
    "Shard",
    "Snapshot",
    "SnapshotModel",
    "SnapshotSegment",
    "Text",
    "TextVector",
    "WindowCommit",
    "load_stage",
    "metadata",
    "split_chars",
    "text_pending",
]

SCHEMA = "riido"
metadata = MetaData(schema=SCHEMA)

C_TEXT = TextType(collation="C")


class Base(DeclarativeBase):
    metadata = metadata


class Snapshot(Base):
    """One immutable set of documents, ranked with one text search configuration: a
    path of segments (``snapshot_segments``) less the documents it removed.

    ``removed`` holds the ``doc_ord`` of every document of its path's segments that
    it does not hold; ``len_raw``/``len_ident`` sum its documents' lengths (BM25's
    dl, so avgdl = len / document_count); ``base`` names the snapshot it was loaded
    on (NULL: self-contained) and ``added`` counts the documents of its own segment.
    ``recent`` holds the ``doc_ord`` of every document its git revision's last commits
    changed (:mod:`riido_pg.extract.recent`; empty for other sources), which
    ``structure_bm25``'s recency prior lifts.
    """

    __tablename__ = "snapshots"
    __table_args__ = (
        CheckConstraint("state IN ('loading', 'ready')", name="snapshots_state_check"),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    text_config: Mapped[str] = mapped_column(TextType, nullable=False)
    state: Mapped[str] = mapped_column(TextType, nullable=False)
    document_count: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    content_digest: Mapped[str] = mapped_column(TextType, nullable=False)
    k1: Mapped[float] = mapped_column(DOUBLE_PRECISION, nullable=False)
    b: Mapped[float] = mapped_column(DOUBLE_PRECISION, nullable=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    removed: Mapped[list[int]] = mapped_column(ARRAY(Integer), nullable=False, server_default="{}")
    len_raw: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default="0")
    len_ident: Mapped[int] = mapped_column(BigInteger, nullable=False, server_default="0")
    base: Mapped[str | None] = mapped_column(C_TEXT, nullable=True)
    added: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    recent: Mapped[list[int]] = mapped_column(ARRAY(Integer), nullable=False, server_default="{}")


class Commit(Base):
    """What one git commit says and changed, shared by every snapshot whose window
    holds it (:mod:`riido_pg.extract.similar`): its cleaned subject and the keys of the
    functions it changed, paths relative to the repository's top. Stored by the first
    load whose window needs it; a commit no snapshot's window holds any more stays."""

    __tablename__ = "commits"

    commit: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    subject: Mapped[str] = mapped_column(TextType, nullable=False)
    keys: Mapped[list[str]] = mapped_column(ARRAY(TextType), nullable=False)


class WindowCommit(Base):
    """One past commit of a snapshot's window (the history-similarity prior's input,
    stored by a load of a git revision): its place in ``git rev-list --no-merges``
    order from the revision (0 newest), its subject's lexemes as the identifier column
    analyses a question under the snapshot's text search configuration, and the
    ``doc_ord`` of the snapshot's documents with one of its keys (sorted, distinct).
    Deleted with the snapshot."""

    __tablename__ = "window_commits"
    __table_args__ = (
        ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="window_commits_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["commit"], ["riido.commits.commit"], name="window_commits_commit_fkey"
        ),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    commit: Mapped[str] = mapped_column(C_TEXT, nullable=False)
    lexemes: Mapped[list[str]] = mapped_column(ARRAY(TextType), nullable=False)
    doc_ords: Mapped[list[int]] = mapped_column(ARRAY(Integer), nullable=False)


class Text(Base):
    """A document text, shared by every snapshot holding it, with what PostgreSQL
    derives from it. ``key`` hashes the splitter version, the text search configuration
    and the text (:func:`riido_pg.storage.texts.text_key`)."""

    __tablename__ = "texts"

    key: Mapped[str] = mapped_column(UUID, primary_key=True)
    body: Mapped[str] = mapped_column(TextType, nullable=False)
    tsv_raw: Mapped[str] = mapped_column(TSVECTOR, nullable=False)
    tsv_ident: Mapped[str] = mapped_column(TSVECTOR, nullable=False)
    len_raw: Mapped[int] = mapped_column(Integer, nullable=False)
    len_ident: Mapped[int] = mapped_column(Integer, nullable=False)


#: Texts that may have lost their last reference: written by an unfinished load
#: (``token``), or left by a dropped or replaced snapshot (``token`` NULL). No primary
#: key: rows are appended and collected in bulk.
text_pending = Table(
    "text_pending",
    metadata,
    Column("token", UUID, nullable=True),
    Column("key", UUID, nullable=False),
    Index("text_pending_token_idx", "token"),
)

#: A parallel load's documents, numbered (``doc_ord``), where all its sessions read
#: them: rows live from the end of the input to the snapshot's flip to ready (the
#: collector removes a killed load's). UNLOGGED, no key: written and read in bulk.
load_stage = Table(
    "load_stage",
    metadata,
    Column("load", UUID, nullable=False),
    Column("doc_ord", Integer, nullable=False),
    Column("doc_id", C_TEXT, nullable=False),
    Column("text_key", UUID, nullable=False),
    prefixes=["UNLOGGED"],
)


class Segment(Base):
    """An immutable set of documents with their postings, shared by every snapshot
    whose path holds it; its documents hold ``first_ord .. first_ord + documents - 1``
    (README "Snapshots on a base")."""

    __tablename__ = "segments"

    segment_id: Mapped[str] = mapped_column(UUID, primary_key=True)
    first_ord: Mapped[int] = mapped_column(Integer, nullable=False)
    documents: Mapped[int] = mapped_column(Integer, nullable=False)
    len_raw: Mapped[int] = mapped_column(BigInteger, nullable=False)
    len_ident: Mapped[int] = mapped_column(BigInteger, nullable=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )


class SnapshotSegment(Base):
    """One segment of a snapshot's path, in path order (``position`` 0 first)."""

    __tablename__ = "snapshot_segments"
    __table_args__ = (
        ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="snapshot_segments_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
        ForeignKeyConstraint(
            ["segment_id"],
            ["riido.segments.segment_id"],
            name="snapshot_segments_segment_id_fkey",
        ),
        Index("snapshot_segments_segment_id_idx", "segment_id"),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    position: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    segment_id: Mapped[str] = mapped_column(UUID, nullable=False)


class Document(Base):
    """A document of a segment; ``doc_ord`` numbers a segment's documents in id byte
    order, from the segment's ``first_ord``."""

    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("segment_id", "doc_id", name="documents_segment_id_doc_id_key"),
        ForeignKeyConstraint(
            ["segment_id"],
            ["riido.segments.segment_id"],
            name="documents_segment_id_fkey",
            ondelete="CASCADE",
        ),
        Index("documents_text_key_idx", "text_key"),
    )

    segment_id: Mapped[str] = mapped_column(UUID, primary_key=True)
    doc_ord: Mapped[int] = mapped_column(Integer, primary_key=True)
    doc_id: Mapped[str] = mapped_column(C_TEXT, nullable=False)
    #: riido.texts.key; no foreign key (see migration 0006): the texts lock protocol
    #: keeps every key a document holds stored
    text_key: Mapped[str] = mapped_column(UUID, nullable=False)


class Posting(Base):
    """The inverted list of one lexeme in one column of one segment: for each
    document holding it (``doc_ords``), its term frequency (``tfs``: positions
    PostgreSQL keeps) and its length (``dls``). BM25's idf, and the saturation that
    depends on avgdl, are computed per snapshot when it is ranked. ``gone`` (NULL:
    none) lists the documents of earlier segments of the path holding the lexeme that
    the snapshot which wrote the segment dropped from its base: subtracted from df,
    left out of the scores (migration 0016); a row may then list no document of its
    own."""

    __tablename__ = "postings"
    __table_args__ = (
        CheckConstraint("col IN ('raw', 'ident', 'name', 'kind')", name="postings_col_check"),
        ForeignKeyConstraint(
            ["segment_id"],
            ["riido.segments.segment_id"],
            name="postings_segment_id_fkey",
            ondelete="CASCADE",
        ),
    )

    segment_id: Mapped[str] = mapped_column(UUID, primary_key=True)
    col: Mapped[str] = mapped_column(TextType, primary_key=True)
    lexeme: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    doc_ords: Mapped[list[int]] = mapped_column(ARRAY(Integer), nullable=False)
    tfs: Mapped[list[int]] = mapped_column(ARRAY(SmallInteger), nullable=False)
    dls: Mapped[list[int]] = mapped_column(ARRAY(Integer), nullable=False)
    gone: Mapped[list[int] | None] = mapped_column(ARRAY(Integer), nullable=True)


class EvalCorpus(Base):
    """Marks a snapshot as an evaluation corpus: its BEIR digest, and the snapshot's
    content digest when the questions were stored (a later ``--replace`` shows)."""

    __tablename__ = "eval_corpora"
    __table_args__ = (
        ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="eval_corpora_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    corpus_sha256: Mapped[str] = mapped_column(TextType, nullable=False)
    content_digest: Mapped[str] = mapped_column(TextType, nullable=False)


class Question(Base):
    """A question of an evaluation corpus; ``repo`` is "" when unknown."""

    __tablename__ = "questions"
    __table_args__ = (
        ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="questions_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    question_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    text: Mapped[str] = mapped_column(TextType, nullable=False)
    repo: Mapped[str] = mapped_column(TextType, nullable=False, server_default="")


class QuestionTarget(Base):
    """A target document of a question (a qrel with score > 0)."""

    __tablename__ = "targets"
    __table_args__ = (
        CheckConstraint("score > 0", name="targets_score_check"),
        ForeignKeyConstraint(
            ["snapshot_id", "question_id"],
            ["riido.questions.snapshot_id", "riido.questions.question_id"],
            name="targets_question_fkey",
            ondelete="CASCADE",
        ),
        Index("targets_snapshot_id_doc_id_idx", "snapshot_id", "doc_id"),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    question_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    doc_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    score: Mapped[int] = mapped_column(Integer, nullable=False)


class SnapshotModel(Base):
    """A learned hint source a snapshot was embedded with: dimension and cost."""

    __tablename__ = "snapshot_models"
    __table_args__ = (
        ForeignKeyConstraint(
            ["snapshot_id"],
            ["riido.snapshots.snapshot_id"],
            name="snapshot_models_snapshot_id_fkey",
            ondelete="CASCADE",
        ),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    model: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    dim: Mapped[int] = mapped_column(Integer, nullable=False)
    embed_seconds: Mapped[float] = mapped_column(DOUBLE_PRECISION, nullable=False)
    #: Texts this snapshot's embedding computed (the others were stored already);
    #: NULL for a snapshot embedded before revision 0013.
    texts_embedded: Mapped[int | None] = mapped_column(Integer, nullable=True)


class TextVector(Base):
    """One text's vector under one model: float32 little-endian, unit length, shared
    by every document (of any snapshot) holding the text; it goes with its text."""

    __tablename__ = "text_vectors"
    __table_args__ = (
        ForeignKeyConstraint(
            ["text_key"],
            ["riido.texts.key"],
            name="text_vectors_text_key_fkey",
            ondelete="CASCADE",
        ),
        CheckConstraint("octet_length(vec) = 4 * dim", name="text_vectors_dim_check"),
    )

    text_key: Mapped[str] = mapped_column(UUID, primary_key=True)
    model: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    dim: Mapped[int] = mapped_column(Integer, nullable=False)
    vec: Mapped[bytes] = mapped_column(BYTEA, nullable=False)


class Shard(Base):
    """A shard of a coordinator: its postgres_fdw server (whose user mapping holds the
    credentials) and its connection string without user or password."""

    __tablename__ = "shards"

    name: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    server: Mapped[str] = mapped_column(TextType, nullable=False, unique=True)
    conninfo: Mapped[str] = mapped_column(TextType, nullable=False)
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )


class Placement(Base):
    """The shard holding a snapshot (no row: the coordinator's own tables hold it)."""

    __tablename__ = "placements"
    __table_args__ = (
        ForeignKeyConstraint(
            ["shard"], ["riido.shards.name"], name="placements_shard_fkey", ondelete="RESTRICT"
        ),
    )

    snapshot_id: Mapped[str] = mapped_column(C_TEXT, primary_key=True)
    shard: Mapped[str] = mapped_column(C_TEXT, nullable=False)


#: The identifier splitter's Unicode classes for riido.search (migration 0012, which
#: writes its rows from riido_pg.splitting): runs of non-ASCII code points lo..hi with
#: one class, one lowercase offset (or text) and one part in the final-sigma rule.
split_chars = Table(
    "split_chars",
    metadata,
    Column("lo", Integer, primary_key=True),
    Column("hi", Integer, nullable=False),
    Column("cls", TextType, nullable=False),
    Column("lower_delta", Integer, nullable=True),
    Column("lower_text", TextType, nullable=True),
    Column("sigma", TextType, nullable=False),
)
