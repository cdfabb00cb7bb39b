"""The command line only through the façade (issue 32): every import in
``riido_pg/cli/*.py`` -- at module level, inside functions, under TYPE_CHECKING -- is
of the command line's own modules, of :mod:`riido_pg` or of :mod:`riido_pg.api`, and
names only what those export; and every name ``riido_pg.api`` exports is there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import riido_pg
import riido_pg.api

CLI = Path(__file__).resolve().parent.parent / "riido_pg" / "cli"
#: What the command line may import from, and the names each exports.
PUBLIC = {"riido_pg": set(riido_pg.__all__), "riido_pg.api": set(riido_pg.api.__all__)}


def _imports(path: Path) -> list[tuple[int, str, str | None]]:
    """Each import of a riido_pg module in ``path``: line, module, name (None for a
    plain ``import``)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}:{node.lineno}: a relative import"
            found += [(node.lineno, node.module or "", a.name) for a in node.names]
    return [f for f in found if f[1] == "riido_pg" or f[1].startswith("riido_pg.")]


def _below_the_facade(path: Path) -> list[str]:
    wrong = []
    for line, module, name in _imports(path):
        if module.startswith("riido_pg.cli.") or module == "riido_pg.cli":
            continue
        exported = PUBLIC.get(module)
        if exported is None or (name is not None and name not in exported):
            what = module if name is None else f"{module}.{name}"
            wrong.append(f"{path.name}:{line}: {what}")
    return wrong


FILES = sorted(CLI.glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_command_line_imports_only_the_public_api(path: Path) -> None:
    assert _below_the_facade(path) == []


def test_the_check_finds_an_import_below_the_facade(tmp_path: Path) -> None:
    """The walk sees imports at every level, and a submodule named through the
    package (``from riido_pg import config``) is no export."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "from riido_pg import Database, config\n"
        "from riido_pg.api import visible\n"
        "if TYPE_CHECKING:\n"
        "    from riido_pg.shards import ShardInfo\n"
        "def f():\n"
        "    import riido_pg.server.migrate\n"
        "    from riido_pg.cli.output import note\n",
        encoding="utf-8",
    )
    assert _below_the_facade(sample) == [
        "sample.py:2: riido_pg.config",
        "sample.py:5: riido_pg.shards.ShardInfo",
        "sample.py:7: riido_pg.server.migrate",
    ]


@pytest.mark.parametrize("name", sorted(riido_pg.api.__all__))
def test_every_name_the_api_exports_is_there(name: str) -> None:
    assert getattr(riido_pg.api, name) is not None
