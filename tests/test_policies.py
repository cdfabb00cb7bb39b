"""The policy registry: every declared policy is accepted by the CLI, ranked by
rank_snapshot and evaluated by eval (or refused by eval for a stated reason), and
every combination the registry forbids is refused with exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.corpus import write_beir
from support.database import Database

from riido_pg import Document, load_snapshot, rank_snapshot
from riido_pg.errors import ConflictingOptions
from riido_pg.ranking import OUT_OF_SCOPE, evaluated_policies, policies
from riido_pg.ranking.inputs import NAME
from riido_pg.ranking.model_hints import model_named
from riido_pg.ranking.policies import COSINE, HINTS, IDENT, MODEL, RAW, select_policy
from riido_pg.storage.embeddings import embed_snapshot

REGISTRY = {p.name: p for p in policies()}
POLICIES = tuple(p.name for p in policies())

DOCS = [
    Document("a", "def read_config(path): return open(path)"),
    Document("b", "class HttpServer: pass"),
    Document("c", "read the config file"),
    Document("d", "unrelated words only"),
]
HINT_IDS = ["d", "b"]
#: The learned hint source the model policies run with (installed by the test extra).
MODEL_NAME = "wordllama-256"


def _inputs(name: str, hints_file: Path) -> list[str]:
    """The options a policy needs beside --policy (its hints file or model)."""
    policy = REGISTRY[name]
    if policy.needs_hints:
        return ["--hints-file", str(hints_file)]
    if policy.needs_model and policy.flag is None:
        return ["--model", MODEL_NAME, "--model-ranking", str(policy.model_ranking)]
    if policy.needs_model:
        return ["--model", MODEL_NAME]
    return []


@pytest.fixture(scope="module", autouse=True)
def snapshot(db: Database) -> None:
    with db.connect() as conn:
        load_snapshot(conn, "pol", DOCS)
        embed_snapshot(conn, "pol", model_named(MODEL_NAME))


@pytest.fixture
def hints_file(tmp_path: Path) -> Path:
    path = tmp_path / "hints.json"
    path.write_text(json.dumps(HINT_IDS))
    return path


def test_the_registry_is_well_formed() -> None:
    assert tuple(REGISTRY) == POLICIES
    assert POLICIES[0] == "bm25"
    assert OUT_OF_SCOPE not in REGISTRY
    flags = [p.flag for p in REGISTRY.values() if p.flag is not None]
    assert len(flags) == len(set(flags))
    for policy in REGISTRY.values():
        assert 1 <= len(policy.lists) <= 4
        assert set(policy.lists) <= {RAW, IDENT, NAME, HINTS, MODEL, COSINE}
        assert policy.evaluated == (HINTS not in policy.lists)


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_is_accepted_by_the_cli(name: str, cli: Any, hints_file: Path) -> None:
    result = cli(["query", "pol", "read config", "--policy", name, *_inputs(name, hints_file)])
    assert result.code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["policy"] == name
    assert sorted(c["id"] for c in body["candidates"]) == ["a", "b", "c", "d"]


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_is_ranked_by_rank_snapshot(name: str, conn: Any) -> None:
    policy = REGISTRY[name]
    hints = HINT_IDS if policy.needs_hints else None
    model = MODEL_NAME if policy.needs_model else None
    ranking = rank_snapshot(conn, "pol", "read config", policy=name, hints=hints, model=model)
    assert ranking.policy == name
    ids = [c.id for c in ranking.candidates]
    assert sorted(ids) == ["a", "b", "c", "d"]
    first_list = policy.lists[0]
    if first_list == RAW:  # baseline first: bm25's first candidate stays first
        assert ids[0] == rank_snapshot(conn, "pol", "read config").candidates[0].id
    if policy.identifier:
        assert all(c.identifier_bm25_score is not None for c in ranking.candidates)


@pytest.fixture(scope="module")
def beir_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    corpus = [{"_id": d.id, "text": d.text} for d in DOCS]
    queries = [{"_id": "q1", "text": "read config"}, {"_id": "q2", "text": "http server"}]
    return write_beir(
        tmp_path_factory.mktemp("pol") / "beir", corpus, queries, [("q1", "a", 1), ("q2", "b", 1)]
    )


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_is_evaluated_or_refused_by_eval(name: str, cli: Any, beir_dir: Path) -> None:
    model = ["--model", MODEL_NAME] if REGISTRY[name].needs_model else []
    result = cli(["eval", str(beir_dir), "--policy", name, "--output", "-", *model])
    if REGISTRY[name].evaluated:
        assert result.code == 0, result.stderr
        assert name in json.loads(result.stdout)["policies"]
    else:
        assert result.code == 2 and result.stdout == ""
        assert result.stderr.startswith(f"error: eval does not run {name}")


def test_eval_runs_every_evaluated_policy_by_default(cli: Any, beir_dir: Path) -> None:
    result = cli(["eval", str(beir_dir), "--output", "-"])
    assert result.code == 0, result.stderr
    assert sorted(json.loads(result.stdout)["policies"]) == sorted(evaluated_policies())


def _forbidden(hints_file: Path) -> list[tuple[list[str], str]]:
    """Every combination the registry forbids, with the start of its error line."""
    out: list[tuple[list[str], str]] = []
    flagged = [p for p in REGISTRY.values() if p.flag is not None]

    def args_of(flag: str) -> list[str]:
        value = {"--hints-file": [str(hints_file)], "--model": [MODEL_NAME]}
        return [flag, *value.get(flag, [])]

    for i, p in enumerate(flagged):
        for q in flagged[i + 1 :]:
            assert p.flag is not None and q.flag is not None
            out.append((args_of(p.flag) + args_of(q.flag), "error: "))
        for other in POLICIES:
            if other != p.name:
                assert p.flag is not None
                out.append(
                    (
                        [*args_of(p.flag), "--policy", other],
                        f"error: {p.flag} means {p.name}; it cannot be used with --policy",
                    )
                )
    for p in REGISTRY.values():
        if p.needs_hints:
            out.append((["--policy", p.name], f"error: --policy {p.name} needs {p.flag} F"))
        if p.needs_model:
            how = (
                p.flag if p.flag is not None else f"--model NAME --model-ranking {p.model_ranking}"
            )
            out.append((["--policy", p.name], f"error: --policy {p.name} needs {how}"))
    out.append((["--policy", OUT_OF_SCOPE], f"error: {OUT_OF_SCOPE} is a result label"))
    out.append((["--policy", "nope"], "error: unknown policy 'nope'"))
    return out


def test_every_forbidden_combination_exits_2(cli: Any, db: Database, hints_file: Path) -> None:
    before = db.counts()
    for args, start in _forbidden(hints_file):
        for command in (["query", "pol", "read config"], ["hints"]):
            result = cli(
                [*command, *args],
                input=json.dumps(
                    {"snapshot_id": "x", "query": "read", "documents": [{"id": "a", "text": "r"}]}
                ),
            )
            assert result.code == 2, (command, args, result)
            assert result.stdout == "" and result.stderr.count("\n") == 1, (args, result)
            assert result.stderr.startswith(start), (args, result.stderr)
    assert db.counts() == before


def test_the_library_applies_the_same_rules(conn: Any) -> None:
    for name, policy in REGISTRY.items():
        wrong = None if policy.needs_hints else HINT_IDS
        with pytest.raises(ConflictingOptions):
            rank_snapshot(conn, "pol", "read", policy=name, hints=wrong)
        wrong_model = None if policy.needs_model else MODEL_NAME
        with pytest.raises(ConflictingOptions):
            rank_snapshot(
                conn,
                "pol",
                "read",
                policy=name,
                model=wrong_model,
                hints=None if not policy.needs_hints else HINT_IDS,
            )
    with pytest.raises(ConflictingOptions, match="result label"):
        rank_snapshot(conn, "pol", "read", policy=OUT_OF_SCOPE)
    assert select_policy(None).name == "bm25"
    assert select_policy(None, ["--identifier-hints"]).name == "identifier_bm25_baseline_first"
