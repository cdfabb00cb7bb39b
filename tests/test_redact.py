"""Passwords never in messages: `redact_dsn` masks URL userinfo and `password=` /
`sslpassword=` values (quoted or not, well-formed or not), and the fragments of them a
libpq error quotes; `--dsn`, `RIIDO_PG_DSN` and `db` commands print no password."""

from __future__ import annotations

from urllib.parse import quote

import psycopg
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from psycopg.conninfo import conninfo_to_dict
from support.cli import Cli, run_cli

from riido_pg.db import connect, redact_dsn
from riido_pg.errors import InvalidDsn
from riido_pg.redact import unparsed_reason

#: The leaking forms: libpq's parse error quotes the URL, the bad token, or the part
#: of a password after its space.
LEAKS = [
    ("postgresql://u:LEAK1@[::1/db", "LEAK1"),
    ("postgresql://u:LEAK2%zz@h/db", "LEAK2"),
    ("host=h password=LE AK5", "AK5"),
    ("host=h password='LE AK6", "AK6"),
    ("postgresql://u@h/db?sslpassword=LEAK7%zz", "LEAK7"),
    ("host=h sslpassword=LE AK8 port=5432", "AK8"),
    ('host=h password="LE AK9"', "AK9"),
    ("postgresql://u:p@LEAK10@127.0.0.1:1/db", "LEAK10"),
]


def _libpq_error(dsn: str) -> str:
    try:
        conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        return str(exc)
    except UnicodeDecodeError:  # psycopg's own, on percent-encoded bytes that are not UTF-8
        return ""
    return ""


@pytest.mark.parametrize(("dsn", "secret"), LEAKS)
def test_each_leaking_form_is_masked(dsn: str, secret: str) -> None:
    assert secret not in redact_dsn(dsn)
    message = _libpq_error(dsn) or f'could not translate host name "{dsn.split("@")[-1]}"'
    assert secret in message or secret in dsn
    assert secret not in redact_dsn(message, dsn)
    assert "***" in redact_dsn(dsn)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            "postgresql://u:pw@h:5432/db?sslmode=require",
            "postgresql://u:***@h:5432/db?sslmode=require",
        ),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgres://:pw@h", "postgres://:***@h"),
        ("postgresql://u:a@b@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:pw@h1,h2:5433/db", "postgresql://u:***@h1,h2:5433/db"),
        (
            "postgresql:///db?host=/tmp&password=pw&port=5",
            "postgresql:///db?host=/tmp&password=***&port=5",
        ),
        ("host=h password=pw dbname=d", "host=h password=*** dbname=d"),
        ("host=h password = pw dbname=d", "host=h password = *** dbname=d"),
        ("host=h password='p w\\' x' dbname=d", "host=h password=*** dbname=d"),
        ("PASSWORD=pw", "PASSWORD=***"),
        ("host=h user=password", "host=h user=password"),
        ("dbname=d mypassword=x", "dbname=d mypassword=x"),
        ('invalid DSN: "postgresql://u:pw@[::1/db"', 'invalid DSN: "postgresql://u:***@[::1/db"'),
        ("no dsn here", "no dsn here"),
    ],
)
def test_masks_only_the_secret(text: str, masked: str) -> None:
    assert redact_dsn(text) == masked


def test_quoted_fragments_of_other_parts_stay() -> None:
    dsn = "host=h port=abc password=secret1"
    message = 'invalid integer value "abc" for connection option "port"'
    assert redact_dsn(message, dsn) == message


_PASSWORD = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), exclude_characters="'\\"
    ),
    min_size=1,
    max_size=20,
).map(lambda s: f"Qz{s}")


@given(_PASSWORD)
@example("Qz%zz")
@example("Qz@x/y")
@example("Qz'x")
def test_no_password_survives_in_any_form(password: str) -> None:
    encoded = quote(password, safe="")
    forms = [
        f"postgresql://u:{encoded}@h/db",
        f"postgresql://u:{password}@[::1/db",
        f"postgresql://u@h/db?password={encoded}&sslmode=disable",
        f"host=h password='{password}' dbname=d",
        f"host=h password={password} dbname=d",
        f"sslpassword={password}",
    ]
    for dsn in forms:
        for text in (dsn, f'invalid DSN: "{dsn}"', _libpq_error(dsn)):
            masked = redact_dsn(text, dsn)
            assert password not in masked, (dsn, text, masked)
            assert encoded not in masked, (dsn, text, masked)


@pytest.mark.parametrize(
    ("dsn", "secret", "how"),
    [(dsn, secret, ("--dsn", "RIIDO_PG_DSN")[i % 2]) for i, (dsn, secret) in enumerate(LEAKS)],
)
def test_cli_prints_no_password(dsn: str, secret: str, how: str) -> None:
    args = ["snapshots", "list"]
    if how == "--dsn":
        result = run_cli(["--dsn", dsn, *args], dsn=None, env={"RIIDO_PG_HOME": "/nonexistent/x"})
    else:
        result = run_cli(args, dsn=dsn)
    assert result.code in (1, 2), result
    assert secret not in result.stderr + result.stdout
    assert result.stderr.startswith(("error: invalid DSN: ", "error: cannot connect")), result
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("command", "leak"),
    [(["db", "current"], 0), (["db", "upgrade"], 1), (["db", "downgrade", "base"], 2)],
)
def test_db_commands_print_no_password(command: list[str], leak: int) -> None:
    """alembic's connection went through SQLAlchemy, whose error showed the whole URL."""
    dsn, secret = LEAKS[leak]
    result = run_cli(command, dsn=dsn)
    assert result.code == 2, result
    assert result.stderr.startswith("error: invalid DSN: "), result
    assert secret not in result.stderr
    assert result.stderr.count("\n") == 1


#: DSNs libpq cannot parse, each with a password ("Qz…" words) its message would quote.
UNPARSED = [
    "postgresql://app:Qzmy Qzsecret Qzpass@127.0.0.1:5432/db",
    "host=h password=Qzmy Qzsecret",
    "host=h password=Qzmy Qzsecret=Qzpass",
    "postgresql://u:Qzab%zz@h/db",
    "postgresql://u@h/db?password=Qzab%00",
    "postgresql://u:Qzab@[::1/db",
    "postgresql://u:Qzab@[]/db",
    "postgresql://u@h/db?Qzab=1",
    "postgresql://u@h/db?Qza=b=c",
    "postgresql://u@h/db?Qzab",
    "postgresql://u@h/db?password=a b Qzab",
]


@pytest.mark.parametrize("dsn", UNPARSED)
def test_a_dsn_libpq_cannot_parse_shows_none_of_its_input(dsn: str) -> None:
    message = _libpq_error(dsn)
    assert "Qz" in message  # libpq quotes the password
    assert "Qz" not in unparsed_reason(message)
    with pytest.raises(InvalidDsn) as caught:
        connect(dsn)
    assert "Qz" not in str(caught.value)
    assert str(caught.value).startswith("invalid DSN: ")
    assert "***" in str(caught.value)


@pytest.mark.parametrize("how", ["--dsn", "RIIDO_PG_DSN"])
def test_a_password_with_spaces_is_never_printed(how: str) -> None:
    dsn = UNPARSED[0]
    args = ["snapshots", "list"]
    if how == "--dsn":
        result = run_cli(["--dsn", dsn, *args], dsn=None, env={"RIIDO_PG_HOME": "/nonexistent/x"})
    else:
        result = run_cli(args, dsn=dsn)
    assert result.code == 2, result
    assert "Qz" not in result.stderr + result.stdout
    assert result.stderr == (
        'error: invalid DSN: unexpected spaces found in "***", use percent-encoded spaces '
        "(%20) instead\n"
    ) or result.stderr.startswith("error: RIIDO_PG_DSN must be"), result
    assert "Qz" not in str(result.stderr)


def test_riido_pg_dsn_names_the_reason_not_the_input() -> None:
    result = run_cli(["snapshots", "list"], dsn=UNPARSED[1])
    assert result.code == 2, result
    assert "Qz" not in result.stderr
    assert 'missing "=" after "***"' in result.stderr, result


@given(st.text(min_size=1, max_size=30))
@example('"Qz"')
@example('x"Qz')
def test_unparsed_reason_keeps_nothing_of_the_input(text: str) -> None:
    for dsn in (
        f"postgresql://u:Qz{text}@h/db",
        f"host=h password=Qz{text}",
        f"postgresql://u@h/db?Qz{text}",
        f"Qz{text}",
    ):
        message = _libpq_error(dsn)
        if message:
            assert "Qz" not in unparsed_reason(message), (dsn, message)


@pytest.mark.parametrize("dsn", ["postgresql://u:Qz%80@h/db", "postgresql://u@h/db?password=Qz%ff"])
def test_percent_encoded_bytes_that_are_not_utf8_are_bad_input(dsn: str, cli: Cli) -> None:
    for result in (
        run_cli(["snapshots", "list"], dsn=dsn),
        run_cli(["--dsn", dsn, "snapshots", "list"], dsn=None),
        cli(["shards", "add", "s1", dsn]),
    ):
        assert result.code == 2, result
        assert "Qz" not in result.stderr and "%" not in result.stderr, result
        assert result.stderr.endswith(": a percent-encoded part is not UTF-8\n"), result
    with pytest.raises(InvalidDsn, match=r"^invalid DSN: a percent-encoded part is not UTF-8$"):
        connect(dsn)


def test_a_message_of_an_unknown_form_is_not_shown() -> None:
    reason = unparsed_reason('some new libpq message about "Qzsecret"')
    assert "Qz" not in reason
    assert reason.startswith("libpq could not parse it")


def test_a_shard_dsn_libpq_cannot_parse_shows_none_of_it(cli: Cli) -> None:
    result = cli(["shards", "add", "s1", UNPARSED[0]])
    assert (result.code, result.stderr) == (
        2,
        "error: invalid DSN for shard 's1': unexpected spaces found in \"***\", use "
        "percent-encoded spaces (%20) instead\n",
    )
