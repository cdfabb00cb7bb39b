"""The testcontainers path: a throwaway PostgreSQL 17 in Docker, as docker-compose.yml
runs it. Runs when a Docker engine answers; skips with the reason otherwise."""

from __future__ import annotations

import json
import os
import socket

import pytest
from support.cli import EXAMPLE, run_cli_process

from riido_pg.server import migrate

pytestmark = pytest.mark.docker


def _docker_reason() -> str | None:
    """Why no Docker engine can be used, or None. Probes the socket itself first: the
    docker client leaks its socket when the engine does not answer."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        path = host.removeprefix("unix://")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(3)
            try:
                probe.connect(path)
            except OSError as exc:
                return f"no Docker engine answers at {path} ({exc.strerror or exc})"
    try:
        import docker

        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__})"
    return None


def test_example_on_a_postgres_17_container() -> None:
    reason = _docker_reason()
    if reason:
        pytest.skip(reason)
    from testcontainers.postgres import PostgresContainer

    with PostgresContainer("postgres:17", driver=None) as pg:
        dsn = pg.get_connection_url()
        migrate.upgrade(dsn)
        result = run_cli_process(["hints", "--identifier-hints"], dsn=dsn, input=EXAMPLE)
        assert result.code == 0, result.stderr
        assert [c["id"] for c in json.loads(result.stdout)["candidates"]] == ["a", "c", "b"]
