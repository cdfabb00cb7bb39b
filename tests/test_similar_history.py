"""The history-similarity prior's input (riido_pg.extract.similar): a revision's past
commits with their subjects and the functions each changed, and the weights a
question gives R's documents through them."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from support.gitrepos import Repo, python_module

from riido_pg.extract.similar import (
    SIMILAR_B,
    SIMILAR_K1,
    documents_by_key,
    function_key,
    history_weights,
    past_commits,
)

BODIES = {"alpha": "    return x + 1", "beta": "    y = x * 2\n    return y"}


def _repo(tmp_path: Path) -> Repo:
    """a.py committed; beta edited; gamma added above alpha (every line moves); a
    side branch's edit of alpha merged."""
    r = Repo(tmp_path / "repo")
    r.write("a.py", python_module(BODIES))
    r.commit("first")
    r.write("a.py", python_module({**BODIES, "beta": "    y = x * 3\n    return y"}))
    r.commit("Fix `beta` rounding (#12)")
    r.write("a.py", python_module({"gamma": "    return -x", **BODIES, "beta": "    return x * 3"}))
    r.commit("Add gamma")
    r.git("checkout", "-q", "-b", "side", "HEAD~1")
    r.write("pkg/b.py", python_module({"delta": "    return x"}))
    r.commit("side: add delta")
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side")
    return r


def test_past_commits_are_non_merge_ancestors_with_what_each_changed(tmp_path: Path) -> None:
    r = _repo(tmp_path)
    past = past_commits(r.path, "HEAD")
    # the merge is left out; the side branch's commit is an ancestor like any other
    assert sorted(p.subject for p in past) == sorted(
        ["first", "Fix `beta` rounding", "Add gamma", "side: add delta"]
    )
    by_subject = {p.subject: p.keys for p in past}
    assert by_subject["first"] == frozenset()  # a root commit changed nothing known
    assert by_subject["Fix `beta` rounding"] == {"a.py:beta"}  # cleaned: no "(#12)"
    # on the commit's own side: gamma, which it added, counts; beta too (edited)
    assert by_subject["Add gamma"] == {"a.py:gamma", "a.py:beta"}
    assert by_subject["side: add delta"] == {"pkg/b.py:delta"}
    # only ancestors of the revision read, newest first, at most as many as asked
    assert [p.subject for p in past_commits(r.path, "HEAD~1", 2)] == [
        "Add gamma",
        "Fix `beta` rounding",
    ]


def test_a_subdirectory_reads_its_own_paths(tmp_path: Path) -> None:
    r = _repo(tmp_path)
    past = past_commits(r.path / "pkg", "HEAD")
    assert {p.subject: p.keys for p in past}["side: add delta"] == {"b.py:delta"}
    assert {p.subject: p.keys for p in past}["Add gamma"] == frozenset()


def test_function_keys_drop_the_line_only() -> None:
    assert function_key("src/a.py:Config.read:12") == "src/a.py:Config.read"
    assert function_key("c12") == "c12"
    assert function_key("a.py:f:x") == "a.py:f:x"
    assert documents_by_key({"a.py:f:1": 0, "a.py:f:9": 1, "a.py:g:3": 2}) == {
        "a.py:f": [0, 1],
        "a.py:g": [2],
    }


def test_weights_by_hand() -> None:
    # two subjects; "read" in one of them, "config" in both
    subjects = [["read", "config"], ["config"]]
    changed = [[0, 1], [2]]
    n, avgdl = 2, 1.5
    idf_read = math.log(1 + (n - 1 + 0.5) / (1 + 0.5))
    idf_config = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))

    def part(idf: float, dl: int) -> float:
        return idf * (SIMILAR_K1 + 1) / (1 + SIMILAR_K1 * (1 - SIMILAR_B + SIMILAR_B * dl / avgdl))

    sim0 = part(idf_read, 2) + part(idf_config, 2)
    sim1 = part(idf_config, 1)
    h = {0: sim0 / 2, 1: sim0 / 2, 2: sim1}
    top = max(h.values())
    got = history_weights(["read", "config", "read"], subjects, changed)
    assert got.keys() == h.keys()
    for d, v in h.items():
        assert math.isclose(got[d], v / top)
    assert history_weights(["write"], subjects, changed) == {}
    assert history_weights(["read"], [], []) == {}


_lexemes = st.lists(st.sampled_from(["fix", "read", "config", "path", "edit", "pager"]))


@given(
    st.lists(st.tuples(_lexemes, st.lists(st.integers(0, 6))), max_size=8),
    _lexemes,
    st.randoms(use_true_random=False),
)
def test_weights_are_shares_of_the_largest_whatever_the_commit_order(
    commits: list[tuple[list[str], list[int]]], question: list[str], rnd: object
) -> None:
    subjects = [s for s, _ in commits]
    changed = [c for _, c in commits]
    got = history_weights(question, subjects, changed)
    assert all(0 < v <= 1 for v in got.values())
    assert not got or math.isclose(max(got.values()), 1.0)
    # a document is weighted only through a commit that changed it and shares a word
    through = {d for s, c in commits if set(s) & set(question) for d in c}
    assert set(got) == through
    shuffled = list(commits)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    again = history_weights(question, [s for s, _ in shuffled], [c for _, c in shuffled])
    assert again.keys() == got.keys()
    assert all(math.isclose(again[d], got[d]) for d in got)
