"""What storing a revision's window of past commits costs a load (docs/evaluation.md
"History similarity"): a repository's revision ``REV~1`` and then ``REV`` loaded into
one database with the window (the first load reads every commit of its window from
git, the second only the new one) and, beside each, into another database with the
window left out. Both databases must be empty and migrated.

    python bench/history_load.py REPO REV DSN_WITH DSN_WITHOUT
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psycopg

from riido_pg import load_snapshot
from riido_pg.extract.documents import tree_documents
from riido_pg.extract.similar import PastCommit, RevisionWindow


def main() -> None:
    repo, rev, with_dsn, without_dsn = sys.argv[1:5]
    root = Path(repo)
    reads: list[int] = []
    read = RevisionWindow.read

    def counted(self: RevisionWindow, shas: Sequence[str]) -> list[PastCommit]:
        reads.append(len(shas))
        return read(self, shas)

    RevisionWindow.read = counted  # type: ignore[method-assign]
    with (
        psycopg.connect(with_dsn, autocommit=True) as on,
        psycopg.connect(without_dsn, autocommit=True) as off,
    ):
        for revision, name in ((f"{rev}~1", "first"), (rev, "later")):
            plain = tree_documents(root, rev=revision)
            plain.history = None
            began = time.perf_counter()
            load_snapshot(off, name, plain)
            without = time.perf_counter() - began
            reads.clear()
            began = time.perf_counter()
            load_snapshot(on, name, tree_documents(root, rev=revision))
            took = time.perf_counter() - began
            print(
                f"{name} ({revision}): {took:.1f} s with the window, {sum(reads)} commits "
                f"read; {without:.1f} s without"
            )


if __name__ == "__main__":
    main()
