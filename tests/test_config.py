"""riido_pg.config: every environment variable declared once, validated the same way
everywhere; a bad value is one `error:` line naming the variable and what it must be,
exit 2; an empty value is unset."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import EXAMPLE, run_cli

from riido_pg import config
from riido_pg.cli.errors import exit_code
from riido_pg.errors import InvalidInput, InvalidSetting

TIMEOUTS = (
    ("RIIDO_PG_STATEMENT_TIMEOUT_MS", config.statement_timeout_ms, 60_000),
    ("RIIDO_PG_LOCK_TIMEOUT_MS", config.lock_timeout_ms, 5_000),
    ("RIIDO_PG_LOAD_TIMEOUT_MS", config.load_timeout_ms, 0),
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in config.VARIABLES:
        monkeypatch.delenv(variable.name, raising=False)


def test_every_riido_variable_is_declared_once() -> None:
    names = [v.name for v in config.VARIABLES]
    assert len(names) == len(set(names))
    assert {n for n in names if n.startswith("RIIDO_PG_")} == {
        "RIIDO_PG_DSN",
        "RIIDO_PG_HOME",
        "RIIDO_PG_STATEMENT_TIMEOUT_MS",
        "RIIDO_PG_LOCK_TIMEOUT_MS",
        "RIIDO_PG_LOAD_TIMEOUT_MS",
        "RIIDO_PG_LOAD_WORK_MEM",
    }
    for variable in config.VARIABLES:
        assert variable.meaning and variable.expects and variable.default


def test_no_other_module_reads_the_environment() -> None:
    """riido_pg.server and riido_pg.db read variables only through riido_pg.config."""
    root = Path(config.__file__).parent
    files = [root / "db.py", *sorted((root / "server").rglob("*.py"))]
    for path in files:
        text = path.read_text()
        assert "os.environ" not in text and "getenv" not in text, path


@pytest.mark.parametrize(("name", "read", "default"), TIMEOUTS)
def test_timeouts_default_and_empty(
    monkeypatch: pytest.MonkeyPatch, name: str, read: object, default: int
) -> None:
    assert callable(read)
    assert read() == default
    monkeypatch.setenv(name, "")
    assert read() == default


@given(st.integers(min_value=0, max_value=2_147_483_647))
def test_timeouts_take_every_whole_number_postgresql_takes(value: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        for name, read, _ in TIMEOUTS:
            mp.setenv(name, str(value))
            assert read() == value
            mp.setenv(name, f" {value}\n")
            assert read() == value


@pytest.mark.parametrize(
    "bad", ["-1", "1.5", "5s", "abc", " ", "2147483648", "1e3", "0x10", "+5", "1_000", "٣"]
)
@pytest.mark.parametrize(("name", "read", "default"), TIMEOUTS)
def test_a_bad_timeout_names_the_variable_and_what_it_must_be(
    monkeypatch: pytest.MonkeyPatch, name: str, read: object, default: int, bad: str
) -> None:
    assert callable(read)
    monkeypatch.setenv(name, bad)
    with pytest.raises(InvalidSetting) as caught:
        read()
    assert str(caught.value) == (
        f"{name} must be a whole number of milliseconds from 0 to 2,147,483,647 "
        f"(0: no limit), not {bad!r}"
    )
    assert isinstance(caught.value, InvalidInput)
    assert exit_code(caught.value) == 2


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("256MB", "256MB"),
        ("64kB", "64kB"),
        ("64", "64kB"),
        (" 1 GB ", "1GB"),
        ("65536B", "65536B"),
        ("2147483647kB", "2147483647kB"),
        ("1TB", "1TB"),
    ],
)
def test_load_work_mem_takes_postgresql_memory_sizes(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    monkeypatch.setenv("RIIDO_PG_LOAD_WORK_MEM", value)
    assert config.load_work_mem() == expected


@pytest.mark.parametrize("bad", ["63kB", "12", "1mb", "256 M", "lots", "-1MB", "2048TB", "1.5GB"])
def test_a_bad_work_mem_is_refused(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("RIIDO_PG_LOAD_WORK_MEM", bad)
    with pytest.raises(InvalidSetting, match=r"^RIIDO_PG_LOAD_WORK_MEM must be a PostgreSQL"):
        config.load_work_mem()


def test_work_mem_default() -> None:
    assert config.load_work_mem() == config.DEFAULT_LOAD_WORK_MEM == "256MB"


def test_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert config.home_override() is None
    assert config.home() == Path(platformdirs.user_data_dir("riido-pg")).resolve()
    monkeypatch.setenv("RIIDO_PG_HOME", str(tmp_path / "a" / ".." / "b"))
    assert config.home() == config.home_override() == tmp_path / "b"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RIIDO_PG_HOME", "~/riido")
    assert config.home() == tmp_path / "riido"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    monkeypatch.setenv("RIIDO_PG_HOME", str(loop / "x"))
    with pytest.raises(InvalidSetting, match=r"^RIIDO_PG_HOME must be a directory path"):
        config.home()


def test_dsn_is_checked_and_its_password_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.dsn() is None
    monkeypatch.setenv("RIIDO_PG_DSN", "postgresql://u:pw@h/db")
    assert config.dsn() == "postgresql://u:pw@h/db"
    monkeypatch.setenv("RIIDO_PG_DSN", "postgresql://u:LEAK2%zz@h/db")
    with pytest.raises(InvalidSetting) as caught:
        config.dsn()
    assert str(caught.value) == (
        "RIIDO_PG_DSN must be a PostgreSQL connection string (a postgresql:// URL or "
        'key=value pairs): invalid percent-encoded token: "***"'
    )


def test_runtime_dir_follows_the_xdg_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert config.runtime_dir() == Path("/run/user/1000")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/dir")
    assert config.runtime_dir() is None


def test_check_reports_the_first_bad_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    config.check()
    monkeypatch.setenv("RIIDO_PG_DSN", "postgresql://[")
    monkeypatch.setenv("RIIDO_PG_LOAD_TIMEOUT_MS", "soon")
    with pytest.raises(InvalidSetting, match=r"^RIIDO_PG_DSN "):
        config.check()
    with pytest.raises(InvalidSetting, match=r"^RIIDO_PG_LOAD_TIMEOUT_MS "):
        config.check(ignore=(config.DSN,))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RIIDO_PG_STATEMENT_TIMEOUT_MS", "-5"),
        ("RIIDO_PG_LOCK_TIMEOUT_MS", "5s"),
        ("RIIDO_PG_LOAD_TIMEOUT_MS", "never"),
        ("RIIDO_PG_LOAD_WORK_MEM", "huge"),
    ],
)
def test_cli_reports_a_bad_value_before_any_work(server_dsn: str, name: str, value: str) -> None:
    """Each of these used to be silently 0, unchecked, or a server error mid-load."""
    result = run_cli(["hints"], dsn=server_dsn, input=EXAMPLE, env={name: value})
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {name} must be ")
    assert result.stderr.endswith(f", not {value!r}\n")
    assert result.stderr.count("\n") == 1
