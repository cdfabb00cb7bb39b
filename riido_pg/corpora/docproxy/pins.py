"""The pinned source distributions of the docproxy corpus: their pins, the cache, the
download through pip, and the package's Python files read from an archive (README "The
documentation-proxy corpus"; the rules are in :mod:`riido_pg.corpora.docproxy`)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import platformdirs

from riido_pg import config
from riido_pg.errors import DownloadFailed, InvalidCorpus
from riido_pg.extract.paths import is_test_path

__all__ = ["PINS", "Pin", "default_cache_dir", "fetch", "package_sources"]


@dataclass(frozen=True)
class Pin:
    """One pinned source distribution."""

    repo: str  # metadata.repo of its documents and questions
    name: str
    version: str
    filename: str
    sha256: str
    package_dir: str  # the importable package, relative to the archive's top directory

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


PINS: tuple[Pin, ...] = (
    Pin(
        "click",
        "click",
        "8.1.8",
        "click-8.1.8.tar.gz",
        "ed53c9d8990d83c2a27deae68e4ee337473f6330c040a31d4225c9574d16096a",
        "src/click",
    ),
    Pin(
        "rich",
        "rich",
        "13.9.4",
        "rich-13.9.4.tar.gz",
        "439594978a49a09530cff7ebc4b5c7103ef57baf48d5ea3184f21d9a2befa098",
        "rich",
    ),
    Pin(
        "sqlalchemy",
        "sqlalchemy",
        "2.0.36",
        "sqlalchemy-2.0.36.tar.gz",
        "7f2767680b6d2398aea7082e45a774b2b0767b5c8d8ffb9c8b683088ea9b29c5",
        "lib/sqlalchemy",
    ),
)


# --- cache and download -------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$RIIDO_PG_HOME/cache/docproxy``, else the user cache dir's ``riido-pg/docproxy``."""
    home = config.home_override()
    if home is not None:
        return home / "cache" / "docproxy"
    return Path(platformdirs.user_cache_dir("riido-pg")).resolve() / "docproxy"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verify(pin: Pin, path: Path) -> None:
    actual = _sha256_file(path)
    if actual != pin.sha256:
        raise InvalidCorpus(
            f"{path} has sha256 {actual}, but {pin.requirement} is pinned to {pin.sha256}; "
            "delete the file to download it again"
        )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _run_pip(pin: Pin, dest: Path) -> None:
    requirements = dest / "requirements.txt"
    requirements.write_text(f"{pin.requirement} --hash=sha256:{pin.sha256}\n", encoding="utf-8")
    command = [
        sys.executable, "-m", "pip", "download",
        "--no-deps", "--no-binary", pin.name, "--require-hashes",
        "--no-input", "--disable-pip-version-check", "--progress-bar", "off",
        "-r", str(requirements), "-d", str(dest),
    ]  # fmt: skip
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise _download_error(pin, dest.parent, str(exc)) from exc
    if proc.returncode == 0:
        return
    output = proc.stdout + "\n" + proc.stderr
    if "DO NOT MATCH THE HASHES" in output:
        raise InvalidCorpus(
            f"the index served a {pin.requirement} sdist whose sha256 is not the pinned "
            f"{pin.sha256}; check the pip index settings"
        )
    raise _download_error(pin, dest.parent, _last_line(output))


def _download_error(pin: Pin, cache_dir: Path, reason: str) -> DownloadFailed:
    return DownloadFailed(
        f"cannot download {pin.requirement}: {reason}; check the network and the pip index "
        f"settings, or put {pin.filename} (sha256 {pin.sha256}) into {cache_dir}"
    )


def _download(pin: Pin, cache_dir: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".download-") as tmp:
        dest = Path(tmp)
        _run_pip(pin, dest)
        saved = sorted(p for p in dest.iterdir() if p.name.endswith(".tar.gz"))
        if len(saved) != 1:
            raise _download_error(pin, cache_dir, "pip saved no sdist")
        _verify(pin, saved[0])
        os.replace(saved[0], target)


def fetch(pin: Pin, cache_dir: Path, progress: Callable[[str], None]) -> Path:
    """The verified sdist of ``pin`` in ``cache_dir``, downloaded first if missing."""
    target = cache_dir / pin.filename
    if target.is_file():
        progress(f"using cached {pin.filename}")
    else:
        progress(f"downloading {pin.requirement}")
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DownloadFailed(
                f"cannot create the cache directory {cache_dir}: {exc.strerror}; "
                "set RIIDO_PG_HOME to a writable directory"
            ) from exc
        _download(pin, cache_dir, target)
    _verify(pin, target)
    return target


def package_sources(pin: Pin, archive: Path) -> dict[str, bytes]:
    """Import path (``click/core.py``) -> bytes of every non-test ``.py`` file of the package."""
    top = pin.filename.removesuffix(".tar.gz")
    package = PurePosixPath(top, pin.package_dir)
    sources: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            member_path = PurePosixPath(member.name)
            if not member.isfile() or member_path.suffix != ".py":
                continue
            if not member_path.is_relative_to(package):
                continue
            path = member_path.relative_to(package.parent).as_posix()
            if is_test_path(path):
                continue
            fh = tar.extractfile(member)
            if fh is not None:
                sources[path] = fh.read()
    return sources
