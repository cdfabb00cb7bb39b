"""Test corpora, in one place: real source functions from the Python standard library
(taken with ast, so tests need no network and no fixtures checked into the repo),
small BEIR directories and JSON Lines files written on the fly."""

from __future__ import annotations

import ast
import functools
import json
import random
import re
import string
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from riido_pg.documents import Document

_MODULES = (
    "json/decoder.py",
    "json/encoder.py",
    "textwrap.py",
    "shlex.py",
    "csv.py",
    "configparser.py",
    "argparse.py",
    "string.py",
    "fnmatch.py",
    "glob.py",
)


Qrel = tuple[str, str, int]
WORDS = (
    "read write config file path open close parse json http server client request "
    "response user name list dict value key error handle get set update delete create "
    "table row column index query cache load save data stream buffer line text"
).split()


def stdlib_functions(limit: int = 400) -> list[Document]:
    """Up to ``limit`` functions (with their docstrings) from a fixed set of modules."""
    return list(_stdlib_functions()[:limit])


@functools.cache
def _stdlib_functions() -> tuple[Document, ...]:
    """Every function of :data:`_MODULES`, sorted by id: parsed once a session."""
    root = Path(sysconfig.get_paths()["stdlib"])
    docs: list[Document] = []
    for rel in _MODULES:
        source = (root / rel).read_text(encoding="utf-8")
        lines = _lines(source)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                text = _segment(lines, node)
                if text:
                    docs.append(Document(f"{rel}:{node.name}:{node.lineno}", text))
    docs.sort(key=lambda d: d.id)
    return tuple(docs)


def _lines(source: str) -> list[str]:
    """``source`` cut after each line end (``\\r\\n``, ``\\r`` or ``\\n``, what the parser
    counts as one; a form feed is no line end), the ends kept."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)


def _segment(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """What ``ast.get_source_segment(source, node)`` gives, from ``source``'s
    :func:`_lines` cut once: the standard function cuts the whole source again on
    each call, which made taking every function of a module quadratic."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[: node.end_col_offset].decode()
    return "".join([head, *lines[first + 1 : last], tail])


def write_jsonl(path: Path, docs: Iterable[dict[str, Any]]) -> Path:
    """Write ``docs`` as JSON Lines (a ``load`` source), one object a line."""
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def numbered_jsonl(path: Path, n: int, word: str = "f") -> Path:
    """``n`` small documents ``doc000000``... (``def WORD_I(x): WORD x``) as JSON Lines."""
    return write_jsonl(
        path, ({"id": f"doc{i:06d}", "text": f"def {word}_{i}(x): {word} x"} for i in range(n))
    )


def write_beir(
    directory: Path,
    corpus: Iterable[dict[str, Any]],
    queries: Iterable[dict[str, Any]],
    qrels: Iterable[Qrel],
    *,
    header: bool = True,
) -> Path:
    """Write a BEIR directory (the helper every eval test uses)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "qrels").mkdir(exist_ok=True)
    (directory / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8"
    )
    (directory / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8"
    )
    lines = ["query-id\tcorpus-id\tscore\n"] if header else []
    lines += [f"{q}\t{d}\t{s}\n" for q, d, s in qrels]
    (directory / "qrels" / "test.tsv").write_text("".join(lines), encoding="utf-8")
    return directory


def small(directory: Path) -> Path:
    return write_beir(
        directory,
        [
            {
                "_id": "d1",
                "title": "Reader",
                "text": "def read_config(): pass",
                "metadata": {"repo": "alpha"},
            },
            {"_id": "d2", "text": "def write_config(): pass", "metadata": {"repo": "beta"}},
            {"_id": "d3", "title": "", "text": "def parse(): pass"},
        ],
        [
            {"_id": "q1", "text": "read the config", "metadata": {"repo": "own"}},
            {"_id": "q2", "text": "write config"},
            {"_id": "q3", "text": "parse it"},
            {"_id": "q4", "text": "nothing relevant"},
        ],
        [("q1", "d1", 1), ("q2", "d3", 1), ("q2", "d2", 2), ("q3", "d3", 1), ("q4", "d1", 0)],
    )


def replace_line(path: Path, lineno: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[lineno - 1] = text
    path.write_text("".join(lines), encoding="utf-8")


def tie_corpus(directory: Path) -> Path:
    """Exact score ties (duplicate texts), zero-score targets and several targets."""
    docs = {
        "a": "alpha beta",
        "b": "alpha beta",
        "c": "gamma",
        "d": "delta delta",
        "e": "def ReadConfig(path): return open(path)",
        "f": "read the config file",
        "g": "alpha",
        "h": "gamma gamma alpha",
        "i": "nothing here",
        "j": "alpha beta",
    }
    for i in range(12):  # a tail of unmatched documents for ranks past 10
        docs[f"z{i:02d}"] = f"filler{i} words"
    queries = {
        "q_tie": "alpha beta",
        "q_multi": "alpha gamma",
        "q_zero": "unmatched words",
        "q_ident": "read config",
        "q_late": "alpha",
        "q_stop": "the of and",
    }
    qrels = [
        ("q_tie", "j", 1),
        ("q_tie", "i", 0),
        ("q_multi", "b", 1),
        ("q_multi", "h", 2),
        ("q_multi", "c", 1),
        ("q_zero", "z11", 1),
        ("q_zero", "d", 1),
        ("q_ident", "e", 1),
        ("q_ident", "f", 1),
        ("q_late", "z05", 1),
        ("q_late", "z10", 1),
        ("q_stop", "c", 1),
    ]
    return write_beir(
        directory,
        [{"_id": k, "text": v} for k, v in docs.items()],
        [{"_id": k, "text": v} for k, v in queries.items()],
        qrels,
    )


def generated_corpus(directory: Path, seed: int, n_docs: int = 300, n_questions: int = 50) -> Path:
    """Code-like documents with exact duplicates, and questions of 1-6 words with 1-3
    targets (plus qrels of score 0), one past the identifier limits, one of stopwords
    only and one empty."""
    rng = random.Random(seed)

    def identifier() -> str:
        parts = rng.sample(WORDS, rng.randint(1, 3))
        style = rng.randrange(4)
        if style == 0:
            return parts[0] + "".join(p.title() for p in parts[1:])
        if style == 1:
            return "_".join(parts)
        if style == 2:
            return "".join(p.title() for p in parts)
        return " ".join(parts)

    texts: list[str] = []
    for i in range(n_docs):
        if texts and rng.random() < 0.1:
            texts.append(rng.choice(texts))  # an exact duplicate: equal scores
            continue
        body = " ".join(identifier() for _ in range(rng.randint(1, 12)))
        texts.append(f"def {identifier()}({identifier()}):\n    return {body} {i % 7}")
    doc_ids = [f"doc-{i:04d}" for i in range(n_docs)]
    rng.shuffle(doc_ids)  # file order is not id order
    corpus = [{"_id": d, "text": t} for d, t in zip(doc_ids, texts, strict=True)]
    queries = []
    qrels: list[tuple[str, str, int]] = []
    for i in range(n_questions):
        qid = f"q{i:03d}"
        text = " ".join(
            rng.choice(WORDS) if rng.random() < 0.7 else identifier()
            for _ in range(rng.randint(1, 6))
        )
        queries.append({"_id": qid, "text": text})
        for d in rng.sample(doc_ids, rng.randint(1, 3)):
            qrels.append((qid, d, rng.choice((1, 1, 2))))
        if rng.random() < 0.3:
            qrels.append((qid, rng.choice(doc_ids), 0))
    letters = string.ascii_lowercase
    many = " ".join("".join(rng.choice(letters) for _ in range(7)) for _ in range(300))
    specials = {"q-many": many + " read config", "q-stop": "the of and", "q-empty": ""}
    for qid, text in specials.items():
        queries.append({"_id": qid, "text": text})
        qrels.append((qid, rng.choice(doc_ids), 1))
    return write_beir(directory, corpus, queries, qrels)
