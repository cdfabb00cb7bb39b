"""Reading and validating BEIR directories (riido_pg.beir), no database needed."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support.corpus import replace_line, small, write_beir

from riido_pg.documents import DocumentSet
from riido_pg.errors import InvalidCorpus
from riido_pg.evaluation.beir import corpus_sha256, read_beir
from riido_pg.sources import beir_documents


def test_reads_documents_questions_targets(tmp_path: Path) -> None:
    corpus = read_beir(small(tmp_path / "c"))
    assert [d.id for d in corpus.documents] == ["d1", "d2", "d3"]
    # title + "\n" + text when there is a non-empty title
    assert corpus.documents[0].text == "Reader\ndef read_config(): pass"
    assert corpus.documents[2].text == "def parse(): pass"
    by_id = {q.id: q for q in corpus.questions}
    assert [q.id for q in corpus.questions] == ["q1", "q2", "q3", "q4"]
    assert by_id["q2"].targets == (("d3", 1), ("d2", 2))
    assert by_id["q4"].targets == ()  # score 0 is not a target
    assert corpus.skipped == 1


def test_documents_are_those_load_reads(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    assert read_beir(directory).documents == DocumentSet(beir_documents(directory), checked=True)


def test_repo_rules(tmp_path: Path) -> None:
    by_id = {q.id: q for q in read_beir(small(tmp_path / "c")).questions}
    assert by_id["q1"].repo == "own"  # the question's own metadata.repo wins
    # no own repo: the first target in qrels order that has one (d3 has none, d2 "beta")
    assert by_id["q2"].repo == "beta"
    assert by_id["q3"].repo == ""  # its only target has no repo
    assert by_id["q4"].repo == ""  # no targets


def test_sha256_is_of_the_three_files_concatenated(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    data = b"".join(
        (directory / n).read_bytes() for n in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
    )
    assert corpus_sha256(directory) == hashlib.sha256(data).hexdigest()
    assert read_beir(directory).sha256 == hashlib.sha256(data).hexdigest()
    with (directory / "queries.jsonl").open("a") as fh:
        fh.write("\n")  # blank lines are ignored by the reader but change the digest
    assert corpus_sha256(directory) != hashlib.sha256(data).hexdigest()


def test_blank_lines_and_crlf_are_accepted(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    qrels = directory / "qrels" / "test.tsv"
    qrels.write_bytes(qrels.read_bytes().replace(b"\n", b"\r\n") + b"\r\n")
    queries = directory / "queries.jsonl"
    queries.write_text("\n" + queries.read_text() + "\n\n")
    assert len(read_beir(directory).questions) == 4


def expect_error(directory: Path, *fragments: str) -> str:
    with pytest.raises(InvalidCorpus) as info:
        read_beir(directory)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert "\n" not in message
    return message


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file(tmp_path: Path, name: str) -> None:
    directory = small(tmp_path / "c")
    (directory / name).unlink()
    expect_error(directory, str(directory / name), "missing")


def test_not_a_directory(tmp_path: Path) -> None:
    expect_error(tmp_path / "nope", "not a directory")


@pytest.mark.parametrize(
    ("name", "lineno", "text", "fragment"),
    [
        ("corpus.jsonl", 2, "{not json\n", "malformed JSON"),
        ("corpus.jsonl", 3, '{"_id": "d3"}\n', 'no "text"'),
        ("corpus.jsonl", 1, '["a list"]\n', "must be an object"),
        (
            "corpus.jsonl",
            2,
            '{"_id": "d2", "text": "x", "metadata": {"repo": 7}}\n',
            "metadata.repo",
        ),
        ("queries.jsonl", 3, "{oops\n", "malformed JSON"),
        ("queries.jsonl", 2, '{"_id": "q2"}\n', 'needs "text"'),
        ("queries.jsonl", 2, '{"text": "no id"}\n', 'needs "_id"'),
        ("queries.jsonl", 4, '{"_id": "q4", "text": "a\\u0000b"}\n', "NUL"),
        ("queries.jsonl", 1, '{"_id": "q1", "text": "t", "metadata": "repo"}\n', "metadata"),
        ("qrels/test.tsv", 3, "q2 d3 1 extra\n", "3 tab-separated fields"),
        ("qrels/test.tsv", 2, "q1\td1\tone\n", "not an integer"),
        ("qrels/test.tsv", 4, "q2\td2\n", "3 tab-separated fields"),
    ],
)
def test_malformed_line_names_file_and_line(
    tmp_path: Path, name: str, lineno: int, text: str, fragment: str
) -> None:
    directory = small(tmp_path / "c")
    replace_line(directory / name, lineno, text)
    expect_error(directory, f"{directory / name}: line {lineno}", fragment)


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    path = directory / "queries.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = b'{"_id": "q2", "text": "\xff"}\n'
    path.write_bytes(b"".join(lines))
    expect_error(directory, f"{path}: line 2", "UTF-8")


def test_unknown_document_in_qrels(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    replace_line(directory / "qrels" / "test.tsv", 3, "q2\tnope\t1\n")
    expect_error(directory, "test.tsv: line 3", "unknown document 'nope'")


def test_unknown_question_in_qrels(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    replace_line(directory / "qrels" / "test.tsv", 2, "q9\td1\t1\n")
    expect_error(directory, "test.tsv: line 2", "unknown question 'q9'")


def test_unknown_document_with_score_zero_is_still_an_error(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    replace_line(directory / "qrels" / "test.tsv", 6, "q4\tghost\t0\n")
    expect_error(directory, "test.tsv: line 6", "unknown document 'ghost'")


def test_duplicate_ids(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    replace_line(directory / "corpus.jsonl", 3, '{"_id": "d1", "text": "again"}\n')
    expect_error(directory, "corpus.jsonl: line 3", "duplicate document id 'd1'", "line 1")
    directory = small(tmp_path / "q")
    replace_line(directory / "queries.jsonl", 4, '{"_id": "q2", "text": "again"}\n')
    expect_error(directory, "queries.jsonl: line 4", "duplicate question id 'q2'", "line 2")
    directory = small(tmp_path / "r")
    replace_line(directory / "qrels" / "test.tsv", 4, "q2\td3\t1\n")
    expect_error(directory, "test.tsv: line 4", "duplicate qrel", "line 3")


def test_empty_corpus(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    (directory / "corpus.jsonl").write_text("\n")
    expect_error(directory, "corpus.jsonl", "no documents")


def test_no_questions(tmp_path: Path) -> None:
    directory = write_beir(tmp_path / "c", [{"_id": "d", "text": "x"}], [], [])
    expect_error(directory, "queries.jsonl", "no questions")


def test_qrels_without_header_or_tabs_or_with_float_scores(tmp_path: Path) -> None:
    """Forgiving where the meaning is unambiguous: a first line whose score is a
    number is a qrel, not a header; space-separated lines; "1.0" scores."""
    directory = write_beir(
        tmp_path / "c",
        [{"_id": "d", "text": "x"}, {"_id": "e", "text": "y"}],
        [{"_id": "q", "text": "x"}, {"_id": "r", "text": "y"}],
        [("q", "d", 1)],
        header=False,
    )
    with (directory / "qrels" / "test.tsv").open("a") as fh:
        fh.write("r e 1.0\n")
    corpus = read_beir(directory)
    assert {(q.id, q.targets) for q in corpus.questions} == {
        ("q", (("d", 1),)),
        ("r", (("e", 1),)),
    }
    replace_line(directory / "qrels" / "test.tsv", 2, "r e 0.5\n")
    expect_error(directory, "test.tsv: line 2", "score '0.5' is not an integer")


def test_empty_qrels(tmp_path: Path) -> None:
    directory = small(tmp_path / "c")
    (directory / "qrels" / "test.tsv").write_text("")
    expect_error(directory, "test.tsv", "no qrels")


def test_no_question_with_a_target(tmp_path: Path) -> None:
    directory = write_beir(
        tmp_path / "c", [{"_id": "d", "text": "x"}], [{"_id": "q", "text": "x"}], [("q", "d", 0)]
    )
    expect_error(directory, "test.tsv", "no question has a target")


def test_questions_without_targets_are_kept_and_counted(tmp_path: Path) -> None:
    queries: Sequence[dict[str, Any]] = [{"_id": f"q{i}", "text": "x"} for i in range(5)]
    directory = write_beir(
        tmp_path / "c", [{"_id": "d", "text": "x"}], queries, [("q0", "d", 1), ("q3", "d", -1)]
    )
    corpus = read_beir(directory)
    assert len(corpus.questions) == 5
    assert corpus.skipped == 4
