"""Snapshot ids never hold a control character (C0, DEL, C1): the error says which
one and where, escaped; so no id can be the hidden ``ID\\x1freplacing`` row of a
parallel replace, and `load ID --replace --jobs 2` never deletes another snapshot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import Cli
from support.corpus import numbered_jsonl
from support.database import Database

from riido_pg.documents import check_snapshot_id
from riido_pg.errors import InvalidInput

CONTROLS = [chr(c) for c in (*range(1, 0x20), 0x7F, *range(0x80, 0xA0))]
PRINTABLE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"), max_size=40
)


@given(PRINTABLE, st.sampled_from(CONTROLS), st.text(max_size=10))
def test_the_first_control_character_is_named_with_its_byte_offset(
    before: str, control: str, after: str
) -> None:
    snapshot_id = before + control + after
    with pytest.raises(InvalidInput) as caught:
        check_snapshot_id(snapshot_id)
    if "\x00" in snapshot_id or re.search("[\ud800-\udfff]", snapshot_id):
        return  # reported as NUL or invalid unicode first
    at = len(before.encode("utf-8"))
    assert str(caught.value) == (
        f"snapshot id contains a control character (\\x{ord(control):02x} at byte {at}); "
        "use printable characters"
    )


@given(PRINTABLE.filter(bool))
def test_printable_ids_pass(snapshot_id: str) -> None:
    assert check_snapshot_id(snapshot_id) == snapshot_id


def test_the_hidden_replace_row_cannot_be_loaded(cli: Cli, db: Database, tmp_path: Path) -> None:
    src = numbered_jsonl(tmp_path / "docs.jsonl", 3)
    hidden = cli(["load", "hx\x1freplacing", str(src)])  # the name hidden rows once had
    assert (hidden.code, hidden.stdout) == (2, "")
    assert hidden.stderr == (
        "error: snapshot id contains a control character (\\x1f at byte 2); "
        "use printable characters\n"
    )
    for bad in ("nosnap\x1b[2J", "a\x7fb", "c1\x85"):
        for args in (["load", bad, str(src)], ["query", bad, "f"], ["snapshots", "drop", bad]):
            result = cli(args)
            assert result.code == 2 and "control character" in result.stderr
            assert "\x1b" not in result.stderr
    assert db.count("snapshots") == 0
    # `load hx --replace --jobs 2` replaces hx and nothing else
    assert cli(["load", "hx", str(src)]).code == 0
    other = numbered_jsonl(tmp_path / "other.jsonl", 5, "g")
    again = cli(["load", "hx", str(other), "--replace", "--jobs", "2"])
    assert again.code == 0 and again.stdout == "replaced snapshot 'hx' (5 documents)\n"
    with db.connect() as conn:
        rows = conn.execute("SELECT snapshot_id, state FROM riido.snapshots").fetchall()
    assert rows == [("hx", "ready")]
