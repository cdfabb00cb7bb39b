"""A repository's own git configuration never runs a program (issue 27, item 1).

A repository received from someone else keeps its ``.git/config``. Every key of it
that names a program (and the hooks directory, a ``textconv``/``filter``/``merge``
driver named in ``.gitattributes``, an included file) is planted here as a command
that writes a marker; every riido-pg command that runs git then runs on it, and no
marker may appear, while the results stay those of the same repository without the
planted configuration.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import Cli, CliResult, run_cli
from support.gitrepos import Repo
from support.histories import history_repo

from riido_pg.extract.git import git_env

#: Keys whose value git runs as a command (a shell snippet).
COMMANDS = (
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "sequence.editor",
    "core.askPass",
    "core.sshCommand",
    "core.gitProxy",
    "core.alternateRefsCommand",
    "diff.external",
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.x509.program",
    "gpg.ssh.program",
    "gpg.ssh.defaultKeyCommand",
    "uploadpack.packObjectsHook",
    "diff.planted.textconv",
    "diff.planted.command",
    "filter.planted.clean",
    "filter.planted.smudge",
    "filter.planted.process",
    "merge.planted.driver",
)
#: Every hook git 2.39 knows of (``core.hooksPath`` points at a directory of them).
HOOKS = (
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit "
    "prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge "
    "pre-push pre-receive update proc-receive post-receive post-update "
    "reference-transaction push-to-checkout pre-auto-gc post-rewrite sendemail-validate "
    "fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist "
    "p4-pre-submit post-index-change"
).split()


def plant(repo: Repo, markers: Path) -> None:
    """Set every key of :data:`COMMANDS` (and the hooks) to write a marker."""
    markers.mkdir()
    hooks = markers.parent / "hooks"
    hooks.mkdir()
    for hook in HOOKS:
        script = hooks / hook
        script.write_text(f"#!/bin/sh\necho {hook} >> {markers}/hook-{hook}\n")
        script.chmod(0o755)
    included = markers.parent / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = echo included >> {markers}/included\n")
    for key in COMMANDS:
        repo.git("config", key, f"echo {key} >> {markers}/{key}; cat")
    repo.git("config", "--add", "credential.helper", f"!echo helper >> {markers}/helper")
    repo.git("config", "core.hooksPath", str(hooks))
    repo.git("config", "log.showSignature", "true")
    repo.git("config", "protocol.ext.allow", "always")
    repo.git("config", "include.path", str(included))


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    """A history repository with the configuration planted (its twin without it
    beside it, ``twin``) and the directory where markers would appear."""
    root = tmp_path_factory.mktemp("planted")
    repo = history_repo(root / "hostile")
    repo.write(".gitattributes", "* diff=planted filter=planted merge=planted\n")
    repo.write("app/extra.py", "def extra_helper(path):\n    return path\n")
    repo.commit("Describe every file with attributes")
    twin = root / "twin"
    shutil.copytree(repo.path, twin, symlinks=True)
    markers = root / "markers"
    plant(repo, markers)
    (repo.path / "app" / "extra.py").write_text("def changed():\n    return 0\n")  # a dirty index
    assert not list(markers.iterdir())
    return repo, markers


def offline(args: list[str]) -> CliResult:
    return run_cli(args, dsn=None)


def no_marker(markers: Path) -> None:
    assert sorted(p.name for p in markers.iterdir()) == []


def test_the_environment_passes_no_program_or_configuration_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_CONFIG_PARAMETERS", "GIT_ASKPASS"):
        monkeypatch.setenv(name, "echo planted")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_EXEC_PATH", "/usr/lib/git-core")
    env = git_env()
    assert {k for k in env if k.startswith("GIT_CONFIG_") and k != "GIT_CONFIG_NOSYSTEM"} == {
        "GIT_CONFIG_GLOBAL"
    }
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_ALLOW_PROTOCOL"] == ""
    assert "GIT_EXTERNAL_DIFF" not in env and "GIT_SSH_COMMAND" not in env
    assert "GIT_ASKPASS" not in env and env["GIT_EXEC_PATH"] == "/usr/lib/git-core"


def test_extract_rev_runs_nothing(repos: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, markers = repos
    twin = repo.path.parent / "twin"
    for where in ("", "app"):
        for rev in ("HEAD", "HEAD~2"):
            got = offline(["extract", str(repo.path / where), "--rev", rev])
            want = offline(["extract", str(twin / where), "--rev", rev])
            assert got.code == 0 and "core.py:load_config:" in got.stdout, got.stderr
            assert (got.code, got.stdout, got.stderr) == (want.code, want.stdout, want.stderr)
    # a revision that reads the index (then is no commit)
    index = offline(["extract", str(repo.path), "--rev", ":app/core.py"])
    assert index.code == 2 and "no commit named" in index.stderr
    no_marker(markers)


def test_corpus_history_runs_nothing(repos: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, markers = repos
    twin = repo.path.parent / "twin"
    got = offline(["corpus", "history", str(repo.path), "--output", str(tmp_path / "a")])
    want = offline(
        ["corpus", "history", str(twin), "--output", str(tmp_path / "b"), "--name", "hostile"]
    )
    assert got.code == 0, got.stderr
    assert got.stdout.replace(str(tmp_path / "a"), "OUT") == want.stdout.replace(
        str(tmp_path / "b"), "OUT"
    )
    no_marker(markers)
    files = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    assert files == sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    for name in (f for f in files if (tmp_path / "b" / f).is_file()):
        a = (tmp_path / "a" / name).read_text().replace(str(twin), str(repo.path))
        b = (tmp_path / "b" / name).read_text().replace(str(twin), str(repo.path))
        assert a == b, name


def test_load_rev_and_eval_run_nothing(cli: Cli, repos: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, markers = repos
    twin = repo.path.parent / "twin"
    # --fresh: the second load would otherwise name the first as its base
    got = cli(["load", "hostile@1", str(repo.path), "--rev", "HEAD~1", "--fresh"])
    want = cli(["load", "twin@1", str(twin), "--rev", "HEAD~1", "--fresh"])
    assert got.code == 0 and got.stdout.replace("hostile", "twin") == want.stdout, got.stderr
    no_marker(markers)
    corpora = []
    for path, name in ((repo.path, "hostile"), (twin, "twin")):
        out = tmp_path / name
        built = offline(["corpus", "history", str(path), "--output", str(out), "--name", name])
        assert built.code == 0, built.stderr
        corpora.append(out)
    results = [cli(["eval", str(c), "--output", "-"]) for c in corpora]
    assert [r.code for r in results] == [0, 0], [r.stderr for r in results]
    assert results[0].stderr.endswith("reused as stored\n") and "0 reused" in results[0].stderr
    hostile = json.loads(results[0].stdout.replace("hostile", "twin"))
    twin_data = json.loads(results[1].stdout)
    assert hostile["per_repo"] == twin_data["per_repo"] and hostile["per_repo"]
    no_marker(markers)
