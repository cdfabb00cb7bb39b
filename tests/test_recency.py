"""The recency prior's input: which functions of a git revision its last commits
changed (riido_pg.extract.recent), and what a load of a revision stores of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.gitrepos import Repo, python_module

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.extract import iter_functions
from riido_pg.extract.documents import tree_documents
from riido_pg.extract.recent import RECENT_COMMITS, recent_lines
from riido_pg.ranking.policies import STRUCTURE_BM25, STRUCTURE_RECENT_PRIOR

#: The recency prior's factor as it shipped before the change-history prior replaced
#: it (the mechanism stays, as a parameter).
RECENT = 1.75

BODIES = {
    "alpha": "    return x + 1",
    "beta": "    y = x * 2\n    z = y - 1\n    return z",
    "gamma": "    return str(x)",
    "delta": "    a = x\n    b = a\n    return b",
}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """a.py and b.py committed, then: beta's body edited, a line of delta's removed,
    c.py added; each in its own commit."""
    r = Repo(tmp_path / "repo")
    r.write("a.py", python_module(BODIES))
    r.write("b.py", python_module({"epsilon": "    return [x]", "zeta": "    return {x}"}))
    r.commit("first")
    r.write("a.py", python_module({**BODIES, "beta": "    y = x * 3\n    z = y - 1\n    return z"}))
    r.commit("edit beta")
    r.write(
        "a.py",
        python_module(
            {
                **BODIES,
                "beta": "    y = x * 3\n    z = y - 1\n    return z",
                "delta": "    a = x\n    return a",
            }
        ),
    )
    r.commit("shorten delta")
    r.write("c.py", python_module({"eta": "    return x"}))
    r.commit("add eta")
    return r


def _recent(repo: Repo, rev: str, commits: int) -> set[str]:
    lines = recent_lines(repo.path, rev, commits)
    for function in iter_functions(repo.path, rev=rev):
        lines.see(function)
    return {i.split(":")[1] for i in lines.ids()}


def test_the_last_commits_changes_are_recent(repo: Repo) -> None:
    assert _recent(repo, "HEAD", 1) == {"eta"}  # a file added: all its functions
    assert _recent(repo, "HEAD", 2) == {"eta", "delta"}  # removed lines count too
    assert _recent(repo, "HEAD", 3) == {"eta", "delta", "beta"}
    # further back than the history goes: everything changed since the first commit
    assert _recent(repo, "HEAD", RECENT_COMMITS) == {"eta", "delta", "beta"}
    assert _recent(repo, "HEAD~1", 1) == {"delta"}  # relative to the revision read
    assert _recent(repo, "HEAD~3", 5) == set()  # a commit without parent


def test_a_subdirectory_reads_its_own_paths(tmp_path: Path) -> None:
    r = Repo(tmp_path / "repo")
    r.write("pkg/a.py", python_module(BODIES))
    r.write("other/a.py", python_module(BODIES))
    r.commit("first")
    r.write("pkg/a.py", python_module({**BODIES, "gamma": "    return repr(x)"}))
    r.write("other/a.py", python_module({**BODIES, "alpha": "    return x - 1"}))
    r.commit("second")
    docs = tree_documents(r.path / "pkg", rev="HEAD")
    ids = [d.id for d in docs]
    assert docs.recent is not None
    assert sorted(docs.recent()) == [i for i in ids if ":gamma:" in i]


def _stored_recent(conn: psycopg.Connection[Any], snapshot_id: str) -> set[str]:
    rows = conn.execute(
        "SELECT d.doc_id FROM riido.snapshots AS s "
        "JOIN riido.snapshot_segments AS p ON p.snapshot_id = s.snapshot_id "
        "JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "WHERE s.snapshot_id = %s AND d.doc_ord = ANY(s.recent)",
        (snapshot_id,),
    ).fetchall()
    return {r[0].split(":")[1] for r in rows}


def test_a_load_of_a_revision_stores_its_recent_documents(
    conn: psycopg.Connection[Any], repo: Repo
) -> None:
    load_snapshot(conn, "rec-old", tree_documents(repo.path, rev="HEAD~2"))
    assert _stored_recent(conn, "rec-old") == {"beta"}
    # on a base (the older snapshot shares most documents): the new ords are stored
    load_snapshot(conn, "rec-new", tree_documents(repo.path, rev="HEAD"))
    base = conn.execute("SELECT base FROM riido.snapshots WHERE snapshot_id = 'rec-new'").fetchone()
    assert base == ("rec-old",)
    assert _stored_recent(conn, "rec-new") == {"eta", "delta", "beta"}
    # a work tree and a list of documents have none
    load_snapshot(conn, "rec-tree", tree_documents(repo.path))
    load_snapshot(conn, "rec-list", [Document("a.py:beta:4", "def beta(x): return x")])
    assert _stored_recent(conn, "rec-tree") == _stored_recent(conn, "rec-list") == set()


def test_the_prior_lifts_a_recent_function_over_an_equal_old_one(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """Two functions alike in every word, the one in y.py changed by the last commit
    (a space added): structure_bm25 puts it first, its score exactly the prior's
    factor times its score without the prior; without the prior, and under bm25, the
    two tie and x.py's comes first (id order)."""
    r = Repo(tmp_path / "repo")
    same = "    return parse_header(line)"
    r.write("x.py", python_module({"read_header": same, "other": "    return 0"}))
    r.write("y.py", python_module({"read_header": same, "more": "    return 1"}))
    r.commit("first")
    r.write(
        "y.py",
        python_module({"read_header": same.replace("return", "return "), "more": "    return 1"}),
    )
    r.commit("touch y.read_header")
    load_snapshot(conn, "rec-pair", tree_documents(r.path, rev="HEAD"))
    assert _stored_recent(conn, "rec-pair") == {"read_header"}
    # the history-similarity and change-history priors off (the commit's subject names
    # the function too, and the window holds the last commit); the shipped recency
    # factor is 1 since the change-history prior replaced it, so the prior is given one
    windowless = {"history_prior": 0.0, "change_prior": 0.0}
    got = rank_snapshot(
        conn,
        "rec-pair",
        "read header",
        policy=STRUCTURE_BM25,
        params={**windowless, "recent_prior": RECENT},
    )
    without = rank_snapshot(
        conn,
        "rec-pair",
        "read header",
        policy=STRUCTURE_BM25,
        params={**windowless, "recent_prior": 1.0},
    )
    plain = rank_snapshot(conn, "rec-pair", "read header")
    for ranking in (without, plain):
        ids = [c.id.split(":")[0] for c in ranking.candidates[:2]]
        assert ids == ["x.py", "y.py"], ranking.policy
    first, second = got.candidates[:2]
    assert (first.id.split(":")[0], second.id.split(":")[0]) == ("y.py", "x.py")
    base = {c.id: c.score for c in without.candidates}
    assert base[first.id] == base[second.id]
    assert first.score == base[first.id] * RECENT
    shipped = rank_snapshot(
        conn, "rec-pair", "read header", policy=STRUCTURE_BM25, params=windowless
    )
    assert STRUCTURE_RECENT_PRIOR == 1.0  # replaced: the shipped ranking is the one without
    assert shipped.candidates == without.candidates
    assert second.score == base[second.id]
