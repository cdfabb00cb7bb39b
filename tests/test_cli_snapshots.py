"""`riido-pg snapshots list|drop`."""

from __future__ import annotations

import json
from typing import Any

from riido_pg import Document, load_snapshot


def test_list_and_drop(cli: Any, db: Any) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "one", [Document("a", "alpha"), Document("b", "beta")])
        load_snapshot(conn, "two", [Document("a", "alpha")], text_config="simple")
    listed = cli(["snapshots", "list", "--format", "json"])
    assert listed.code == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["documents"], r["text_config"], r["state"]) for r in rows] == [
        ("one", 2, "english", "ready"),
        ("two", 1, "simple", "ready"),
    ]
    table = cli(["snapshots", "list"])
    assert table.code == 0
    assert "one" in table.stdout and "simple" in table.stdout and "ready" in table.stdout
    dropped = cli(["snapshots", "drop", "one"])
    assert (dropped.code, dropped.stdout) == (0, "dropped snapshot 'one'\n")
    assert db.count("documents") == 1
    again = cli(["snapshots", "drop", "one"])
    assert (again.code, again.stderr) == (2, "error: no snapshot 'one'\n")
    assert [r["id"] for r in json.loads(cli(["snapshots", "list", "--format", "json"]).stdout)] == [
        "two"
    ]
