"""What the MCP tools answer, shaped for an agent's context window (pure).

A ``search`` answer is the snapshot, the policy that ranked, ``total`` (every
candidate of the full ranking) and the first ``limit`` candidates in rank order:
id, rank, scores (4 decimals) and, for an extracted function, ``path``,
``start_line`` and ``end_line`` (:func:`riido_pg.extract.locations.locate`) with
``snippet``: up to ``snippet`` lines of its text from the line of its name, each cut
at :data:`MAX_LINE` characters. The bounds (:data:`MAX_LIMIT`, :data:`MAX_SNIPPET`)
keep the largest answer a few times the default one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from riido_pg.api.results import Listing
from riido_pg.extract.locations import locate
from riido_pg.ranking import IDENTIFIER_BM25_FUSED, Candidate, Ranking

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_POLICY",
    "DEFAULT_SNIPPET",
    "MAX_LIMIT",
    "MAX_LINE",
    "MAX_SNIPPET",
    "search_answer",
    "snapshots_answer",
    "snippet_lines",
]

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
DEFAULT_SNIPPET = 3
MAX_SNIPPET = 20
#: Characters of a snippet line; a longer line ends with "…".
MAX_LINE = 160
#: The best non-learned policy on the held-out questions (docs/evaluation.md: the
#: highest MRR of any policy on real change requests).
DEFAULT_POLICY = IDENTIFIER_BM25_FUSED
#: Decimals of a score in an answer (ranks, not scores, are what an agent acts on).
DECIMALS = 4


def snippet_lines(text: str, first: int, count: int) -> str:
    """Lines ``first`` to ``first + count - 1`` (0-based) of ``text``, each cut at
    :data:`MAX_LINE` characters, joined by newlines."""
    lines = text.split("\n")[first : first + count]
    cut = (line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…" for line in lines)
    return "\n".join(cut)


def _candidate(c: Candidate, text: str | None, snippet: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: round(v, DECIMALS) if isinstance(v, float) else v for k, v in c.to_dict().items()
    }
    if text is None:
        return out
    where = locate(c.id, text)
    if where is not None:
        out.update(path=where.path, start_line=where.start_line, end_line=where.end_line)
    if snippet:
        out["snippet"] = snippet_lines(text, where.offset if where else 0, snippet)
    return out


def search_answer(ranking: Ranking, texts: Mapping[str, str], snippet: int) -> dict[str, Any]:
    """The ``search`` answer of ``ranking``, with the candidates' ``texts`` (by id)."""
    return {
        "snapshot": ranking.snapshot_id,
        "policy": ranking.policy,
        "total": ranking.total,
        "candidates": [_candidate(c, texts.get(c.id), snippet) for c in ranking.candidates],
    }


def snapshots_answer(listing: Listing) -> dict[str, Any]:
    """The ``snapshots`` answer: each snapshot's id, documents, state, created, base
    (and shard, when it is on one), and the error of each shard that did not answer."""
    keep = ("id", "documents", "state", "created", "base")
    snapshots = []
    for row in listing.to_dicts():
        entry = {k: row[k] for k in keep}
        if row["shard"] is not None:
            entry["shard"] = row["shard"]
        snapshots.append(entry)
    answer: dict[str, Any] = {"snapshots": snapshots}
    if listing.unreachable:
        answer["unreachable"] = [e.render(cli=True) for e in listing.unreachable]
    return answer
