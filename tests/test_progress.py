"""Long work reports every phase as it starts, so a progress display never looks
frozen: load (staging, tsvectors, postings, statistics) and eval."""

from __future__ import annotations

from typing import Any

from riido_pg import Document, load_snapshot


def test_load_reports_each_phase_before_its_work(conn: Any) -> None:
    calls: list[tuple[str, int, int]] = []
    docs = [Document(f"d{i:04d}", f"read config {i}") for i in range(500)]
    load_snapshot(conn, "phases", docs, progress=lambda *call: calls.append(call))
    phases = list(dict.fromkeys(phase for phase, _, _ in calls))
    # one connection: the new texts are stored in one statement after the reading
    assert phases[:3] == ["documents", "tsvectors", "index"]
    assert set(phases) <= {"documents", "tsvectors", "index", "statistics"}
    assert ("tsvectors", 0, 0) in calls  # started before the statement, size unknown
    assert calls[-1 if phases[-1] == "index" else -2] == ("index", 2, 2)
    assert calls[0] == ("documents", 0, 0)  # a stream: its size is known at its end
    assert ("index", 0, 2) in calls
    staged = [(done, total) for phase, done, total in calls if phase == "documents"]
    assert [d for d, _ in staged] == sorted(d for d, _ in staged)
    assert staged[-1] == (500, 500) and all(t == 0 for _, t in staged[:-1])
    # the first load into an empty table refreshes the planner statistics, and says so
    assert calls[-1] == ("statistics", 0, 0)
