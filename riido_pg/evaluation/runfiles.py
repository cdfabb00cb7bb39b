"""TREC run files (``eval --run-dir``): one per policy, ``<policy>.trec``.

Each line is ``qid Q0 docid rank score tag``, the first ``run_depth`` documents of each
ranking (default 1000, the TREC norm; metrics always use the full ranking). ``score``
is ``N - rank + 1`` (N documents) for every policy: strictly decreasing, so tools that
re-sort by score (trec_eval; ir_measures breaks score ties by document id
*descending*) see exactly our order. ``tag`` is the policy name. Files are written
whole (:mod:`riido_pg.files`): an error leaves no partial run file.

Fields are separated by whitespace, so a question or document id holding whitespace
(any character ``str.isspace`` says is one: a space, a tab, a newline, a no-break
space…) or a control character would forge fields or whole lines: such an id is
refused (:func:`check_run_ids`, one error naming it) before a run file is opened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from riido_pg.errors import ConflictingOptions, Hint
from riido_pg.files import output_dir, output_file
from riido_pg.quoting import visible

__all__ = ["DEFAULT_RUN_DEPTH", "RunWriter", "check_run_ids", "unsafe_run_id"]

DEFAULT_RUN_DEPTH = 1000

#: Whitespace (Unicode's, as ``str.split`` splits on it) and C0/C1 controls.
_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def unsafe_run_id(value: str) -> bool:
    """Whether ``value`` cannot be one field of a run-file line."""
    return _UNSAFE.search(value) is not None


def check_run_ids(kind: str, ids: Iterable[str]) -> None:
    """ConflictingOptions naming the first of ``ids`` (question or document ids) that
    a run file cannot hold."""
    bad = next((i for i in ids if unsafe_run_id(i)), None)
    if bad is not None:
        raise ConflictingOptions(
            f"{kind} id {visible(repr(bad))} holds whitespace or a control character: "
            "a TREC run file cannot hold it",
            Hint("evaluate without --run-dir", "pass run_dir=None"),
        )


class RunWriter:
    """One run file per policy; each replaces its target when the stack closes
    without an error. The files are opened by the first :meth:`begin`, once its ids
    are checked, so an id a run file cannot hold leaves nothing written."""

    def __init__(self, stack: ExitStack, run_dir: Path, policies: Sequence[str]) -> None:
        self.stack, self.run_dir, self.policies = stack, run_dir, tuple(policies)
        self.doc_ids: list[str] = []
        self.paths = [run_dir / f"{p}.trec" for p in policies]
        self.files: dict[str, IO[bytes]] = {}

    def begin(self, question_ids: Iterable[str], doc_ids: list[str]) -> None:
        """Check the ids of the snapshot whose questions are written next, then make
        its documents the ones :meth:`write` names."""
        check_run_ids("question", question_ids)
        check_run_ids("document", doc_ids)
        if not self.files:
            output_dir(self.run_dir)
            self.files = {
                p: self.stack.enter_context(output_file(path))
                for p, path in zip(self.policies, self.paths, strict=True)
            }
        self.doc_ids = doc_ids

    def write(self, policy: str, qid: str, order: Sequence[int]) -> None:
        ids, n = self.doc_ids, len(self.doc_ids)
        self.files[policy].write(
            "".join(
                f"{qid} Q0 {ids[d]} {rank} {n - rank + 1} {policy}\n"
                for rank, d in enumerate(order, start=1)
            ).encode("utf-8")
        )
