"""The documentation-proxy corpus (README "The documentation-proxy corpus"): extraction
rules on small sources, download and cache behaviour without network, and one real
build (network)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from riido_pg.cli.errors import exit_code
from riido_pg.corpora.docproxy import (
    PINS,
    DownloadFailed,
    FunctionRecord,
    assemble,
    build_docproxy,
    default_cache_dir,
    documented_functions,
    is_test_path,
    summary_of,
)
from riido_pg.errors import InvalidCorpus, RiidoError


def extract(source: str | bytes, path: str = "pkg/mod.py") -> dict[str, FunctionRecord]:
    return {r.qualname: r for r in documented_functions(source, repo="pkg", path=path)}


# --- extraction -----------------------------------------------------------------------

SOURCE = '''\
import functools


def plain(a, b):
    """Add two numbers together.

    More text that is not part of the question.
    """
    # a comment stays
    return a + b


def undocumented():
    return 1


def not_a_docstring():
    x = "a string, but not the first statement"
    return x


class Greeter:
    """A class docstring is not a function."""

    @functools.lru_cache
    @staticmethod
    def hello(name):
        """Say hello to
        someone   by\tname."""
        return f"hello {name}"

    async def fetch(self):
        """Fetch it asynchronously, please."""
        await something()


def outer():
    """Build and return the inner function."""

    def inner():
        """Do the inner work now."""
        return 2

    return inner


def short():
    """Too short."""
    return None
'''


def test_only_functions_with_a_docstring_are_documents() -> None:
    assert list(extract(SOURCE)) == [
        "plain",
        "Greeter.hello",
        "Greeter.fetch",
        "outer",
        "outer.<locals>.inner",
        "short",
    ]


def test_docstring_is_removed_and_everything_else_kept() -> None:
    record = extract(SOURCE)["plain"]
    assert record.text == "def plain(a, b):\n    # a comment stays\n    return a + b"
    assert record.lineno == 4
    assert record.doc_id == "pkg:pkg/mod.py:plain:4"


def test_question_is_first_paragraph_folded() -> None:
    assert extract(SOURCE)["plain"].summary == "Add two numbers together."
    assert extract(SOURCE)["Greeter.hello"].summary == "Say hello to someone by name."


def test_fewer_than_three_words_is_a_document_without_question() -> None:
    record = extract(SOURCE)["short"]
    assert record.summary is None
    assert record.text == "def short():\n    return None"


def test_method_keeps_decorators_and_is_dedented() -> None:
    record = extract(SOURCE)["Greeter.hello"]
    assert record.text == (
        '@functools.lru_cache\n@staticmethod\ndef hello(name):\n    return f"hello {name}"'
    )
    assert record.lineno == 27  # the def line, not the first decorator (25)


def test_async_def() -> None:
    record = extract(SOURCE)["Greeter.fetch"]
    assert record.text == "async def fetch(self):\n    await something()"
    assert record.summary == "Fetch it asynchronously, please."


def test_nested_functions_are_documents_and_their_docstrings_leave_the_parent() -> None:
    records = extract(SOURCE)
    inner = records["outer.<locals>.inner"]
    assert inner.text == "def inner():\n    return 2"
    outer = records["outer"]
    assert outer.text == "def outer():\n\n    def inner():\n        return 2\n\n    return inner"
    assert "inner work" not in outer.text


def test_docstring_sharing_a_line_loses_only_its_characters() -> None:
    source = 'def f(é="é"): "Return the accented default."\n'
    record = extract(source)["f"]
    assert record.text == 'def f(é="é"):'
    assert record.summary == "Return the accented default."


def test_comment_after_docstring_goes_with_its_line() -> None:
    source = 'def f():\n    """Do a long thing here."""  # noqa: E501\n    return 1\n'
    assert extract(source)["f"].text == "def f():\n    return 1"


def test_docstring_only_body_leaves_the_signature() -> None:
    source = "class P:\n    def size(self) -> int:\n        '''Return the size of it.'''\n"
    assert extract(source)["P.size"].text == "def size(self) -> int:"


def test_bytes_with_coding_cookie_and_crlf() -> None:
    source = (
        '# -*- coding: latin-1 -*-\r\ndef f():\r\n    """Grüße an alle Leser."""\r\n'
        '    return "ü"\r\n'
    )
    record = extract(source.encode("latin-1"))["f"]
    assert record.text == 'def f():\n    return "ü"'
    assert record.summary == "Grüße an alle Leser."


def test_form_feed_does_not_shift_lines() -> None:
    source = '\x0c\ndef f():\n    """Say it \x0c with feeling."""\n    return 1  # \x0c\n'
    record = extract(source)["f"]
    assert record.text == "def f():\n    return 1  # \x0c"
    assert record.lineno == 2


def test_source_that_does_not_parse_is_skipped() -> None:
    assert extract("def broken(:\n    '''Never parsed at all.'''\n") == {}
    assert extract(b"\xff\xfe not utf-8 at all") == {}


@pytest.mark.parametrize(
    ("docstring", "summary"),
    [
        ("Return the thing.", "Return the thing."),
        ("\n\n    Return   the\n    thing.\n\n    Details here.\n", "Return the thing."),
        ("Return the thing\n   \nDetails.", "Return the thing"),
        ("Two words.", None),
        ("", None),
        ("   \n  \n", None),
        ("Ends in\n\tthree words", "Ends in three words"),
    ],
)
def test_summary_of(docstring: str, summary: str | None) -> None:
    assert summary_of(docstring) == summary


@pytest.mark.parametrize(
    ("path", "excluded"),
    [
        ("sqlalchemy/orm/session.py", False),
        ("click/testing.py", False),
        ("sqlalchemy/testing/fixtures.py", True),
        ("pkg/tests/helpers.py", True),
        ("pkg/test/helpers.py", True),
        ("pkg/test_core.py", True),
        ("pkg/core_test.py", True),
        ("pkg/conftest.py", True),
        ("pkg/contest.py", False),
        ("pkg/latest.py", False),
    ],
)
def test_is_test_path(path: str, excluded: bool) -> None:
    assert is_test_path(path) is excluded


def test_the_corpus_uses_the_one_test_path_rule(tmp_path: Path) -> None:
    from riido_pg.corpora.docproxy import Pin, package_sources
    from riido_pg.extract import paths

    assert is_test_path is paths.is_test_path
    archive = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("pkg/a.py", "pkg/spec/b.py", "pkg/__tests__/c.py", "pkg/d_test.py",
                     "pkg/e.test.py", "pkg/testing.py", "docs/f.py"):  # fmt: skip
            data = b"def f(): pass\n"
            info = tarfile.TarInfo(f"pkg-1.0/src/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    pin = Pin("pkg", "pkg", "1.0", archive.name, "0" * 64, "src/pkg")
    assert sorted(package_sources(pin, archive)) == ["pkg/a.py", "pkg/testing.py"]


# --- assembly -------------------------------------------------------------------------


def record(repo: str, path: str, qualname: str, lineno: int, summary: str | None) -> FunctionRecord:
    return FunctionRecord(repo, path, qualname, lineno, f"def {qualname}(): pass", summary)


RECORDS = [
    record("b", "b/x.py", "C.one", 10, "Return exactly one object."),
    record("b", "b/x.py", "D.one", 30, "Return exactly one object."),
    record("b", "b/x.py", "short", 40, None),
    record("a", "a/y.py", "one", 5, "Return exactly one object."),
    record("a", "a/y.py", "two", 7, "Return two objects, maybe."),
]


def lines(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text
    return text.splitlines()


def test_shared_summaries_make_one_question_per_repo_with_several_targets() -> None:
    files = assemble(RECORDS)
    queries = [json.loads(line) for line in lines(files.queries)]
    qrels = [line.split("\t") for line in lines(files.qrels)]
    assert qrels[0] == ["query-id", "corpus-id", "score"]
    shared = "Return exactly one object."
    digest = hashlib.sha256(shared.encode()).hexdigest()[:12]
    assert {(q["_id"], q["metadata"]["repo"]) for q in queries if q["text"] == shared} == {
        (f"q-a-{digest}", "a"),
        (f"q-b-{digest}", "b"),
    }
    targets = [d for q, d, s in qrels[1:] if q == f"q-b-{digest}"]
    assert targets == ["b:b/x.py:C.one:10", "b:b/x.py:D.one:30"]
    assert all(s == "1" for _, _, s in qrels[1:])
    assert files.stats.documents == 5
    assert files.stats.questions == 3
    assert files.stats.qrels == 4
    assert files.stats.documents_per_repo == {"a": 2, "b": 3}
    assert files.stats.questions_per_repo == {"a": 2, "b": 1}


def test_corpus_lines_are_sorted_json_with_sorted_keys() -> None:
    files = assemble(RECORDS)
    corpus = lines(files.corpus)
    first = json.loads(corpus[0])
    assert first == {
        "_id": "a:a/y.py:one:5",
        "text": "def one(): pass",
        "metadata": {"repo": "a"},
    }
    assert corpus[0] == json.dumps(first, ensure_ascii=False, sort_keys=True)
    assert [json.loads(line)["_id"] for line in corpus][-1] == "b:b/x.py:short:40"


def test_assembly_does_not_depend_on_input_order() -> None:
    assert assemble(RECORDS) == assemble(list(reversed(RECORDS)))


def test_non_ascii_is_written_as_utf8() -> None:
    files = assemble([record("a", "a/y.py", "f", 1, "Grüße an alle.")])
    assert "Grüße".encode() in files.queries


# --- cache and download, without network ----------------------------------------------


def test_default_cache_dir_follows_riido_pg_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RIIDO_PG_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path.resolve() / "cache" / "docproxy"
    monkeypatch.delenv("RIIDO_PG_HOME")
    assert default_cache_dir().parts[-2:] in {("riido-pg", "docproxy"), ("Cache", "docproxy")}


def no_subprocess(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"unexpected subprocess: {args}")


def test_cached_file_with_wrong_hash_is_rejected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / PINS[0].filename).write_bytes(b"not the real sdist")
    with pytest.raises(InvalidCorpus, match=PINS[0].sha256):
        build_docproxy(tmp_path / "out", cache_dir=cache)
    assert not (tmp_path / "out").exists()


def fake_pip(returncode: int, stderr: str) -> Any:
    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert command[1:4] == ["-m", "pip", "download"]
        assert "--require-hashes" in command
        return subprocess.CompletedProcess(command, returncode, "Collecting click==8.1.8\n", stderr)

    return run


def test_download_failure_names_the_package_and_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stderr = "ERROR: Could not find a version that satisfies the requirement\n\n"
    monkeypatch.setattr(subprocess, "run", fake_pip(1, stderr))
    with pytest.raises(DownloadFailed) as info:
        build_docproxy(tmp_path / "out", cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert message.startswith(
        "cannot download click==8.1.8: ERROR: Could not find a version that satisfies"
    )
    assert PINS[0].sha256 in message and str(tmp_path / "cache") in message
    assert exit_code(info.value) == 1
    assert isinstance(info.value, RiidoError)
    assert not (tmp_path / "out").exists()
    assert list((tmp_path / "cache").iterdir()) == []  # the temporary download dir is gone


def test_unwritable_cache_dir_names_riido_pg_home(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(DownloadFailed, match="RIIDO_PG_HOME"):
        build_docproxy(tmp_path / "out", cache_dir=blocker / "cache")


def test_index_serving_other_bytes_is_an_invalid_corpus(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stderr = "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.\n"
    monkeypatch.setattr(subprocess, "run", fake_pip(1, stderr))
    with pytest.raises(InvalidCorpus, match=r"click==8\.1\.8"):
        build_docproxy(tmp_path / "out", cache_dir=tmp_path / "cache")


# --- the real corpus ------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


#: The corpus as built on Python 3.11 (``ast`` and ``inspect`` are part of the recipe).
DIGESTS_PY311 = {
    "corpus.jsonl": "5dce6a28959f96af4c176bcd5d31dae0fa72ac8833c95d0acc6139b2ae20c50b",
    "queries.jsonl": "2e3638681ab60c135cc2dd132980bf3ef04fe5190784f091d66ba8d548c62cd2",
    "qrels/test.tsv": "757bbb56486988ea4b24b00116dd060f2c71a9a12475936377042e5c0a4fa440",
}


@pytest.mark.network
def test_real_build_is_byte_identical_and_sane(
    docproxy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, one = docproxy.built, docproxy.out  # built from an empty cache directory
    assert sorted(p.name for p in docproxy.cache.iterdir()) == sorted(p.filename for p in PINS)

    # the second build must not need pip, the network or the index
    monkeypatch.setattr(subprocess, "run", no_subprocess)
    monkeypatch.setenv("PIP_INDEX_URL", "http://invalid.invalid/simple")
    second = build_docproxy(tmp_path / "two", cache_dir=docproxy.cache)
    assert first == second
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (one / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert (first.documents, first.questions, first.qrels) == (3134, 2772, 3108)
    assert first.documents_per_repo == {"click": 174, "rich": 525, "sqlalchemy": 2435}
    if sys.version_info[:2] == (3, 11):
        digests = {
            name: hashlib.sha256((one / name).read_bytes()).hexdigest() for name in DIGESTS_PY311
        }
        assert digests == DIGESTS_PY311

    corpus = read_jsonl(one / "corpus.jsonl")
    queries = read_jsonl(one / "queries.jsonl")
    qrels = (one / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    doc_ids = {d["_id"] for d in corpus}
    query_ids = {q["_id"] for q in queries}
    assert len(doc_ids) == len(corpus) == first.documents > 1000
    assert len(query_ids) == len(queries) == first.questions > 1000
    assert qrels[0] == "query-id\tcorpus-id\tscore"
    pairs = [line.split("\t") for line in qrels[1:]]
    assert len(pairs) == first.qrels
    assert all(q in query_ids and d in doc_ids and s == "1" for q, d, s in pairs)
    assert {q for q, _, _ in pairs} == query_ids
    assert set(first.documents_per_repo) == {"click", "rich", "sqlalchemy"}
    assert all(count > 100 for count in first.documents_per_repo.values())
    assert all(len(q["text"].split()) >= 3 for q in queries)
    repo_of = {d["_id"]: d["metadata"]["repo"] for d in corpus}
    question_repo = {q["_id"]: q["metadata"]["repo"] for q in queries}
    assert all(repo_of[d] == question_repo[q] for q, d, _ in pairs)
    assert not any("/testing/" in d or "/tests/" in d for d in doc_ids)
    text_of = {d["_id"]: d["text"] for d in corpus}
    question_text = {q["_id"]: q["text"] for q in queries}
    assert all(question_text[q] not in " ".join(text_of[d].split()) for q, d, _ in pairs)
