"""TREC run files (``eval --run-dir``): one per policy, ``<policy>.trec``.

Each line is ``qid Q0 docid rank score tag``, the first ``run_depth`` documents of each
ranking (default 1000, the TREC norm; metrics always use the full ranking). ``score``
is ``N - rank + 1`` (N documents) for every policy: strictly decreasing, so tools that
re-sort by score (trec_eval; ir_measures breaks score ties by document id
*descending*) see exactly our order. ``tag`` is the policy name. Files are written
whole (:mod:`riido_pg.files`): an error leaves no partial run file.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from riido_pg.files import output_dir, output_file

__all__ = ["DEFAULT_RUN_DEPTH", "RunWriter"]

DEFAULT_RUN_DEPTH = 1000


class RunWriter:
    """One open run file per policy; each replaces its target when the stack closes
    without an error. ``doc_ids`` names the documents of the snapshot whose questions
    are written now (set before each snapshot's)."""

    def __init__(
        self,
        stack: ExitStack,
        run_dir: Path,
        policies: Sequence[str],
        doc_ids: list[str] | None = None,
    ) -> None:
        output_dir(run_dir)
        self.doc_ids = doc_ids or []
        self.paths = [run_dir / f"{p}.trec" for p in policies]
        self.files: dict[str, IO[bytes]] = {
            p: stack.enter_context(output_file(path))
            for p, path in zip(policies, self.paths, strict=True)
        }

    def write(self, policy: str, qid: str, order: Sequence[int]) -> None:
        ids, n = self.doc_ids, len(self.doc_ids)
        self.files[policy].write(
            "".join(
                f"{qid} Q0 {ids[d]} {rank} {n - rank + 1} {policy}\n"
                for rank, d in enumerate(order, start=1)
            ).encode("utf-8")
        )
