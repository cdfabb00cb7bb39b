"""What the :class:`~riido_pg.api.Database` façade's methods return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from riido_pg.storage import LoadResult

if TYPE_CHECKING:
    from riido_pg.errors import RiidoError
    from riido_pg.evaluation import Evaluation
    from riido_pg.extract import ExtractStats
    from riido_pg.shards import PlacedSnapshot

__all__ = ["Evaluated", "Listing", "Loaded"]


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a load did: the store's :class:`~riido_pg.LoadResult` (``snapshot_id``,
    ``documents``, ``action``), the model it embedded with now (None: no model, or
    the snapshot was embedded with it before), a source tree's extraction counts."""

    result: LoadResult
    embedded: str | None = None
    stats: ExtractStats | None = None

    @property
    def snapshot_id(self) -> str:
        return self.result.snapshot_id

    @property
    def documents(self) -> int:
        return self.result.documents

    @property
    def action(self) -> str:
        """ "created", "replaced" or "unchanged"."""
        return self.result.action


@dataclass(frozen=True, slots=True)
class Listing:
    """Every snapshot a coordinator knows, and the error of each shard that did not
    answer (the other shards' snapshots are listed all the same)."""

    snapshots: list[PlacedSnapshot]
    unreachable: list[RiidoError]

    def to_dicts(self) -> list[dict[str, Any]]:
        """The listing as ``riido-pg snapshots list --format json`` prints it."""
        return [
            {
                "id": p.snapshot.snapshot_id,
                "documents": p.snapshot.documents,
                "text_config": p.snapshot.text_config,
                "state": p.snapshot.state,
                "created": p.snapshot.created_at.isoformat(),
                "shard": p.shard,
                "base": p.snapshot.base,
                "added": p.snapshot.added,
                "removed": p.snapshot.removed,
            }
            for p in self.snapshots
        ]


@dataclass(frozen=True, slots=True)
class Evaluated:
    """An evaluation and the snapshot it ran on (None for history corpora, a snapshot
    per question) and, for a BEIR directory, whether its corpus was ``"stored"`` now
    or ``"reused"`` (None for a stored snapshot). For history corpora: the snapshots
    ``loaded`` now and those ``reused`` as they were stored, each in load order."""

    evaluation: Evaluation
    snapshot_id: str | None
    stored: str | None = None
    loaded: tuple[str, ...] = ()
    reused: tuple[str, ...] = ()
