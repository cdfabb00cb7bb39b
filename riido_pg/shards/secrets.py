"""A shard DSN's secrets: which connection options are credentials, splitting them
from the rest, and masking them in messages (README "More than one server").

The credentials of a shard go into the coordinator's ``postgres_fdw`` user mapping,
whose options PostgreSQL shows only to the mapped role and the server's owner; the
rest of the DSN (host, port, database, ``sslmode``, the paths of ``sslcert`` and
``sslkey``, ...) is catalog text any reader may see. A credential is ``user`` and
every option libpq itself marks as a password field (``dispchar`` ``*``:
``password``, ``sslpassword``, and ``oauth_client_secret`` in libpq 18), plus the
SCRAM keys libpq 18 marks as debug options. File paths are not secrets: what they
name stays on the client's disk.
"""

from __future__ import annotations

import re
from functools import cache

from psycopg.pq import Conninfo

__all__ = ["CREDENTIALS", "mask_dsn_secrets", "secret_keywords", "split_credentials"]

#: Credentials whatever the local libpq says (its list only adds to these).
CREDENTIALS = (
    "user",
    "password",
    "sslpassword",
    "oauth_client_secret",
    "scram_client_key",
    "scram_server_key",
)
_MASK = "***"
#: Shorter secrets are masked only inside quoted fragments (masking every "ab" of a
#: message would garble it).
_SHORTEST = 4


@cache
def secret_keywords() -> frozenset[str]:
    """The connection options that are secrets (``user`` is a credential, not a secret)."""
    marked = {o.keyword.decode() for o in Conninfo.get_defaults() if o.dispchar == b"*"}
    return frozenset(marked | set(CREDENTIALS[1:]))


def split_credentials(params: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``params`` as (credentials for the user mapping, everything else)."""
    secret = secret_keywords() | {"user"}
    return (
        {k: v for k, v in params.items() if k in secret},
        {k: v for k, v in params.items() if k not in secret},
    )


def _keyword_alternation() -> str:
    return "|".join(sorted(map(re.escape, secret_keywords()), key=len, reverse=True))


def _candidates(dsn: str) -> list[str]:
    """What could be a secret in ``dsn``, read leniently because it may not parse:
    a URI's password, and the value of every secret option (in a key/value string,
    everything up to the next ``keyword=``, since an unquoted value with a space is
    what libpq fails on)."""
    found: list[str] = []
    uri = re.match(r"\s*postgres(?:ql)?://", dsn)
    keys = _keyword_alternation()
    if uri:
        rest = dsn[uri.end() :]
        userinfo = rest[: rest.rfind("@")] if "@" in rest else ""
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        found += re.findall(rf"[?&](?:{keys})=([^&#]*)", rest)
    else:
        for match in re.finditer(rf"(?:^|\s)(?:{keys})\s*=\s*", dsn):
            value = dsn[match.end() :]
            if value.startswith("'"):
                end = re.search(r"(?<!\\)'", value[1:])
                found.append(value[1 : end.start() + 1] if end else value[1:])
            else:
                following = re.search(r"\s+[A-Za-z_]+\s*=", value)
                found.append(value[: following.start()] if following else value)
    return [c.strip() for c in found if c.strip()]


def _mask_uri(text: str) -> str:
    keys = _keyword_alternation()
    text = re.sub(r"(postgres(?:ql)?://[^:@/\s\"]*:)[^\s\"]*(@)", rf"\1{_MASK}\2", text)
    return re.sub(rf"([?&](?:{keys})=)[^&#\s\"]*", rf"\1{_MASK}", text)


def mask_dsn_secrets(text: str, dsn: str) -> str:
    """``text`` (a message about ``dsn``, perhaps libpq's, which quotes what it could
    not parse) with every secret of ``dsn`` masked: each quoted fragment that overlaps
    a secret becomes ``"***"``, a URI keeps all but its password, and any other
    occurrence of a secret (of four characters or more) is masked too."""
    secrets = _candidates(dsn)
    pieces = {p for s in secrets for p in [s, *s.split()] if p}

    def quoted(match: re.Match[str]) -> str:
        inner = match.group(1)
        if re.match(r"postgres(?:ql)?://", inner):
            inner = _mask_uri(inner)
        elif inner and any(p in inner or inner in p for p in pieces):
            inner = _MASK
        return f'"{inner}"'

    text = _mask_uri(re.sub(r'"([^"]*)"', quoted, text))
    for secret in sorted(pieces, key=len, reverse=True):
        if len(secret) >= _SHORTEST:
            text = text.replace(secret, _MASK)
    return text
