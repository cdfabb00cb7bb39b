"""Interleaving (README "Ranking"): exhaustive for 1-7 candidates.

For every n in 1..7, a few baseline orders, and every partial permutation of the
baseline as hints (every subset length 0..n, every order: 13,700 hint lists at n = 7),
both ``baseline_first`` and ``auxiliary_first`` are checked against the contract's
guarantees and against an independent reference implementation written from the README
text. No database is needed.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Hashable, Iterator, Sequence
from typing import TypeVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import riido_pg
from riido_pg import auxiliary_first, baseline_first
from riido_pg.evaluation.walks import Pair
from riido_pg.ranking import interleave as interleave_module

T = TypeVar("T", bound=Hashable)


def reference_interleave(lead: Sequence[T], follow: Sequence[T]) -> list[T]:
    """README "Ranking", read literally: alternate between the two lists, ``lead``
    first; on a list's turn, drop ids already emitted from its front and emit its next
    id; a list with nothing left has run out, and then the rest of the other follows."""
    queues = (deque(lead), deque(follow))
    emitted: list[T] = []
    turn = 0
    while queues[0] or queues[1]:
        queue = queues[turn]
        while queue and queue[0] in emitted:
            queue.popleft()
        if queue:
            emitted.append(queue.popleft())
        turn = 1 - turn  # an empty list passes its turn, so the other list follows on
    return emitted


def partial_permutations(ids: Sequence[int]) -> Iterator[tuple[int, ...]]:
    for k in range(len(ids) + 1):
        yield from itertools.permutations(ids, k)


def _baselines(n: int) -> list[tuple[str, list[int]]]:
    ids = list(range(n))
    orders = [("identity", ids), ("reversed", ids[::-1])]
    if n >= 3:
        # evens then odds: neither sorted nor reverse-sorted
        orders.append(("evens-odds", ids[0::2] + ids[1::2]))
    return orders


CASES = [
    pytest.param(n, baseline, id=f"n{n}-{name}")
    for n in range(1, 8)
    for name, baseline in _baselines(n)
]


def test_hint_list_count_at_seven() -> None:
    assert sum(1 for _ in partial_permutations(range(7))) == 13_700


def _check_one(baseline: list[int], hints: list[int]) -> None:
    n = len(baseline)
    baseline_copy, hints_copy = list(baseline), list(hints)
    rank_in_baseline = {item: r for r, item in enumerate(baseline, start=1)}

    bf = baseline_first(baseline, hints)
    af = auxiliary_first(baseline, hints)

    # inputs untouched, results are new lists
    assert baseline == baseline_copy
    assert hints == hints_copy
    assert type(bf) is list and type(af) is list
    assert bf is not baseline and bf is not hints
    assert af is not baseline and af is not hints

    for result in (bf, af):
        # a permutation of the baseline: every id exactly once, nothing else
        assert len(result) == n
        assert sorted(result) == sorted(baseline)

    # first candidate
    assert bf[0] == baseline[0]
    if hints:
        assert af[0] == hints[0]
    else:
        assert af == baseline

    # the rank bounds: baseline rank r appears by min(n, 2r - 1) / min(n, 2r)
    bf_rank = {item: r for r, item in enumerate(bf, start=1)}
    af_rank = {item: r for r, item in enumerate(af, start=1)}
    for item, r in rank_in_baseline.items():
        assert bf_rank[item] <= min(n, 2 * r - 1), (baseline, hints, bf, item)
        assert af_rank[item] <= min(n, 2 * r), (baseline, hints, af, item)

    # the alternation rule itself
    assert bf == reference_interleave(baseline, hints), (baseline, hints)
    assert af == reference_interleave(hints, baseline), (baseline, hints)


@pytest.mark.parametrize(("n", "baseline"), CASES)
def test_exhaustive_partial_permutations(n: int, baseline: list[int]) -> None:
    checked = 0
    for hint_tuple in partial_permutations(baseline):
        _check_one(baseline, list(hint_tuple))
        checked += 1
    assert checked == sum(1 for _ in partial_permutations(range(n)))


@pytest.mark.parametrize(("n", "baseline"), CASES)
def test_hints_outside_the_baseline_raise(n: int, baseline: list[int]) -> None:
    stranger = n  # ids are 0..n-1
    for k in range(n + 1):
        for prefix in itertools.permutations(baseline, k):
            for at in sorted({0, k // 2, k}):  # the stranger first, in the middle, last
                hints = [*prefix[:at], stranger, *prefix[at:]]
                hints_copy = list(hints)
                for fn in (baseline_first, auxiliary_first):
                    with pytest.raises(ValueError, match="not in the baseline"):
                        fn(baseline, hints)
                assert hints == hints_copy


def test_small_examples() -> None:
    # the main-job example shape: baseline a, b, c; the hints rank c first
    assert baseline_first(["a", "b", "c"], ["c", "a", "b"]) == ["a", "c", "b"]
    assert auxiliary_first(["a", "b", "c"], ["c", "a", "b"]) == ["c", "a", "b"]
    # a skipped (already emitted) id does not use up its list's turn
    assert baseline_first([1, 2, 3, 4], [2, 1, 4, 3]) == [1, 2, 3, 4]
    assert baseline_first([1, 2, 3, 4], [4, 3, 2, 1]) == [1, 4, 2, 3]
    assert auxiliary_first([1, 2, 3, 4], [4, 3]) == [4, 1, 3, 2]
    # partial hints: when they run out, the rest of the baseline follows in order
    assert baseline_first([1, 2, 3, 4, 5], [5]) == [1, 5, 2, 3, 4]
    assert auxiliary_first([1, 2, 3, 4, 5], [5]) == [5, 1, 2, 3, 4]
    # empty inputs
    assert baseline_first([], []) == []
    assert auxiliary_first([], []) == []
    assert baseline_first([7], []) == [7]


def test_results_are_new_lists() -> None:
    baseline, hints = [1, 2, 3], [3]
    result = baseline_first(baseline, [])
    assert result == baseline and result is not baseline
    result.append(99)
    assert baseline == [1, 2, 3]
    result = auxiliary_first(baseline, [])
    assert result == baseline and result is not baseline
    assert auxiliary_first(baseline, hints) is not hints


def test_tuples_accepted_and_untouched() -> None:
    baseline, hints = ("a", "b", "c"), ("c",)
    assert baseline_first(baseline, hints) == ["a", "c", "b"]
    assert auxiliary_first(baseline, hints) == ["c", "a", "b"]


def test_hint_not_in_baseline_raises_value_error() -> None:
    with pytest.raises(ValueError, match="'z'"):
        baseline_first(["a", "b"], ["a", "z"])
    with pytest.raises(ValueError, match="'z'"):
        auxiliary_first(["a", "b"], ["z"])
    with pytest.raises(ValueError):
        baseline_first([], ["a"])


def test_duplicate_baseline_ids_raise_value_error() -> None:
    # "every baseline id appears exactly once" cannot hold for a baseline with repeats
    with pytest.raises(ValueError, match="duplicate"):
        baseline_first(["a", "b", "a"], [])
    with pytest.raises(ValueError, match="duplicate"):
        auxiliary_first(["a", "b", "a"], ["b"])


def test_exported_api() -> None:
    assert riido_pg.baseline_first is interleave_module.baseline_first
    assert riido_pg.auxiliary_first is interleave_module.auxiliary_first
    assert "baseline_first" in riido_pg.__all__
    assert "auxiliary_first" in riido_pg.__all__
    from riido_pg import auxiliary_first as af
    from riido_pg import baseline_first as bf

    assert bf(["x", "y"], ["y"]) == ["x", "y"]
    assert af(["x", "y"], ["y"]) == ["y", "x"]


# --------------------------------------------------------------------------- larger n


@st.composite
def baseline_and_hints(draw: st.DrawFn, *, duplicates: bool = False) -> tuple[list[str], list[str]]:
    baseline = draw(st.lists(st.text(max_size=6), unique=True, max_size=80))
    if not baseline:
        return baseline, []
    if duplicates:
        hints = draw(st.lists(st.sampled_from(baseline), max_size=2 * len(baseline)))
    else:
        order = draw(st.permutations(baseline))
        hints = order[: draw(st.integers(0, len(baseline)))]
    return baseline, hints


def _check_properties(baseline: list[str], hints: list[str]) -> None:
    n = len(baseline)
    baseline_copy, hints_copy = list(baseline), list(hints)
    bf = baseline_first(baseline, hints)
    af = auxiliary_first(baseline, hints)
    assert baseline == baseline_copy and hints == hints_copy
    assert bf is not baseline and af is not baseline
    for result in (bf, af):
        assert len(result) == n and set(result) == set(baseline)
    if n:
        assert bf[0] == baseline[0]
    if hints:
        assert af[0] == hints[0]
    bf_rank = {item: r for r, item in enumerate(bf, start=1)}
    af_rank = {item: r for r, item in enumerate(af, start=1)}
    for r, item in enumerate(baseline, start=1):
        assert bf_rank[item] <= min(n, 2 * r - 1)
        assert af_rank[item] <= min(n, 2 * r)
    assert bf == reference_interleave(baseline, hints)
    assert af == reference_interleave(hints, baseline)


@settings(max_examples=300, deadline=None)
@given(baseline_and_hints())
def test_larger_n_partial_permutation_hints(case: tuple[list[str], list[str]]) -> None:
    _check_properties(*case)


@settings(max_examples=300, deadline=None)
@given(baseline_and_hints(duplicates=True))
def test_larger_n_hints_with_repeats(case: tuple[list[str], list[str]]) -> None:
    # The contract does not forbid a hint list that repeats an id; repeats are
    # already-emitted ids and are skipped like any other.
    _check_properties(*case)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=4), unique=True, min_size=0, max_size=30),
    st.lists(st.text(max_size=4), min_size=1, max_size=10),
)
def test_larger_n_unknown_hint_raises(baseline: list[str], extra: list[str]) -> None:
    strangers = [x for x in extra if x not in baseline]
    if not strangers:
        return
    hints = baseline[: len(baseline) // 2] + strangers
    with pytest.raises(ValueError):
        baseline_first(baseline, hints)
    with pytest.raises(ValueError):
        auxiliary_first(baseline, hints)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(0, 12), max_size=14),
    st.lists(st.integers(0, 12), max_size=14),
    st.sets(st.integers(0, 12), max_size=4),
)
def test_interleave_until_is_the_generators_prefix(
    first: list[int], second: list[int], targets: set[int]
) -> None:
    """The first target's rank and the items above it, from one walk without a
    generator, equal the lazy interleave's (lists with repeats and shared ids)."""
    merged = list(interleave_module.iter_interleave(first, second))
    ranks = [r for r, item in enumerate(merged, start=1) if item in targets]
    if not ranks:
        with pytest.raises(ValueError):
            interleave_module.interleave_until(first, second, targets)
        return
    assert interleave_module.interleave_until(first, second, targets) == (
        ranks[0],
        merged[: ranks[0] - 1],
    )


# --- the evaluation's batch walks -------------------------------------------------


def _flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=starts[1:])
    return np.asarray([x for xs in lists for x in xs], dtype=np.int64), starts


_questions = st.lists(
    st.tuples(
        st.lists(st.integers(0, 11), max_size=14),
        st.lists(st.integers(0, 11), max_size=14),
        st.sets(st.integers(0, 11), max_size=4),
    ),
    min_size=1,
    max_size=5,
)


def _check_walks(questions: list[tuple[list[int], list[int], set[int]]], cut: bool = False) -> None:
    """``cut``: each list walked only as far as the evaluation keeps it (twice the
    other's length), the oracle walking them whole."""
    firsts = [a[: 2 * len(b)] if cut else a for a, b, _ in questions]
    seconds = [b[: 2 * len(a)] if cut else b for a, b, _ in questions]
    first, first_starts = _flat(firsts)
    second, second_starts = _flat(seconds)
    rows = np.asarray([q for q, (_, _, t) in enumerate(questions) for _ in t], dtype=np.int64)
    ids = np.asarray([x for _, _, t in questions for x in t], dtype=np.int64)
    pair = Pair(first, first_starts, second, second_starts, rows, ids, 12)
    for first_leads in (True, False):
        walks = pair.walk(first_leads)
        for q, (a, b, targets) in enumerate(questions):
            lead, follow = (a, b) if first_leads else (b, a)
            fa, fb = (
                slice(first_starts[q], first_starts[q + 1]),
                slice(second_starts[q], second_starts[q + 1]),
            )
            above = first[fa][walks.first_above[fa]].tolist()
            above += second[fb][walks.second_above[fb]].tolist()
            try:
                rank, expected = interleave_module.interleave_until(lead, follow, targets)
            except ValueError:
                assert walks.ranks[q] == 0
                continue
            assert walks.ranks[q] == rank
            # each document once, in either list: the same documents as the walk's
            assert sorted(above) == sorted(expected)


@settings(max_examples=600, deadline=None)
@given(_questions)
def test_batch_walks_equal_interleave_until(
    questions: list[tuple[list[int], list[int], set[int]]],
) -> None:
    """Random lists with repeats and shared ids, empty lists, targets in one list,
    in both or in neither, several questions at once and either list leading: the
    rank and the documents above the first target are ``interleave_until``'s."""
    _check_walks(questions)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.permutations(range(12)),
            st.permutations(range(12)),
            st.sets(st.integers(0, 11), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_batch_walks_equal_interleave_until_on_rankings(
    rankings: list[tuple[list[int], list[int], set[int]]],
) -> None:
    """The evaluation's case: two rankings of the same documents, each cut after its
    first target (so no repeats, and the walk stops before either list runs out)."""
    questions = []
    for a, b, targets in rankings:
        cut_a = next(k for k, x in enumerate(a) if x in targets) + 1
        cut_b = next(k for k, x in enumerate(b) if x in targets) + 1
        questions.append((list(a[:cut_a]), list(b[:cut_b]), targets))
    _check_walks(questions)
    _check_walks(questions, cut=True)


def test_batch_walks_on_no_questions_and_a_lone_list() -> None:
    _check_walks([([], [], set())])
    _check_walks([([3, 3, 1], [], {1}), ([], [2, 2, 5], {5}), ([4], [4], {4})])
