"""Imports on a second thread (riido_pg.background): what the evaluation imports while
it waits on the server, and that the evaluation leaves scipy to that thread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from riido_pg.background import import_in_background


def test_the_modules_are_imported_in_order_by_a_thread_the_process_waits_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "riido_bg_first.py").write_text("import sys\nORDER = ['first']\n")
    (tmp_path / "riido_bg_second.py").write_text(
        "import riido_bg_first\nriido_bg_first.ORDER.append('second')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    thread = import_in_background("riido_bg_first", "riido_bg_second")
    assert not thread.daemon  # an ending process waits rather than stopping an import
    thread.join(10)
    assert not thread.is_alive()
    assert sys.modules["riido_bg_first"].ORDER == ["first", "second"]
    for name in ("riido_bg_first", "riido_bg_second"):
        monkeypatch.delitem(sys.modules, name)


def test_a_failing_import_stops_nothing_and_raises_where_it_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "riido_bg_broken.py").write_text("raise ValueError('broken on purpose')\n")
    (tmp_path / "riido_bg_after.py").write_text("DONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    thread = import_in_background("riido_bg_missing_module", "riido_bg_broken", "riido_bg_after")
    thread.join(10)
    assert sys.modules["riido_bg_after"].DONE is True
    monkeypatch.delitem(sys.modules, "riido_bg_after")
    with pytest.raises(ValueError, match="broken on purpose"):
        __import__("riido_bg_broken")


def test_the_evaluation_imports_scipy_only_where_it_computes() -> None:
    """riido_pg.evaluation imports scipy.sparse where it uses it, not at module level:
    so ``Database.evaluate`` can leave that import to a thread while its first
    statements run (importing it at module level would make the thread useless)."""
    code = (
        "import sys, riido_pg.evaluation, riido_pg.api.evaluate, riido_pg.ranking.policies; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
