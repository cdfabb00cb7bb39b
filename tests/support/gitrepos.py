"""Small git repositories built in a test's tmp_path, with fixed names and dates.

Every commit is made with the same author, committer and a date that advances one
minute a commit, and git reads no user or system configuration, so the same steps
give the same commit ids on every machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["Repo", "git_env", "python_module"]


def python_module(bodies: dict[str, str]) -> str:
    """A Python module of one-argument functions, each name with its body's lines."""
    return "\n\n".join(f"def {name}(x):\n{body}\n" for name, body in bodies.items())


def git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Ada",
        GIT_AUTHOR_EMAIL="ada@example.com",
        GIT_COMMITTER_NAME="Ada",
        GIT_COMMITTER_EMAIL="ada@example.com",
        LC_ALL="C",
    )
    return env


class Repo:
    """A work tree with a repository, committed to step by step."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ticks = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "core.autocrlf", "false")
        self.git("config", "commit.gpgsign", "false")

    def env(self) -> dict[str, str]:
        env = git_env(self.path.parent)
        date = f"2024-01-01T00:{self.ticks // 60:02d}:{self.ticks % 60:02d}+00:00"
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
        return env

    def git(self, *args: str, input: bytes | None = None) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=input,
            capture_output=True,
            env=self.env(),
            check=False,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout.decode("utf-8", "surrogateescape").strip()

    def write(self, rel: str | bytes, data: str | bytes) -> Path:
        path = Path(os.fsdecode(os.path.join(os.fsencode(self.path), os.fsencode(rel))))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def remove(self, rel: str) -> None:
        self.git("rm", "-q", "-r", "--", rel)

    def commit(self, subject: str, *, add: bool = True) -> str:
        """Commit everything (``git add -A -f``) and return the commit id."""
        if add:
            self.git("add", "-A", "-f")
        self.ticks += 1
        self.git("commit", "-q", "--allow-empty", "-m", subject)
        return self.git("rev-parse", "HEAD")

    def gitlink(self, rel: str, commit: str = "1" * 40) -> None:
        """Stage a submodule entry (a gitlink) without a submodule."""
        self.git("update-index", "--add", "--cacheinfo", f"160000,{commit},{rel}")

    def checkout(self, rev: str) -> None:
        """A clean checkout of ``rev``: nothing untracked is left behind."""
        self.git("checkout", "-q", "-f", "--detach", rev)
        self.git("clean", "-q", "-f", "-f", "-d", "-x")
