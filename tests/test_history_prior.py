"""structure_bm25's history-similarity and change-history priors (riido_pg.extract.similar,
riido_pg.storage.history): what a load of a git revision stores (each commit once,
a window per snapshot, nothing after a failed load), the score recomputed from the
definition (history_weights over the window), and the three paths held equal: the
SQL statements, riido.search and the evaluation's numpy path, every limit against
the full ranking, on a base with removed documents too."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.corpus import stdlib_functions
from support.database import Database
from support.gitrepos import Repo, python_module
from support.histories import history_corpus

from riido_pg import Database as Facade
from riido_pg import TreeOptions, load_snapshot, rank_snapshot
from riido_pg.documents import MAX_QUERY_BYTES, Document, DocumentStream
from riido_pg.evaluation import evaluate, store_corpus
from riido_pg.extract.documents import tree_documents
from riido_pg.extract.similar import (
    PastCommit,
    RevisionWindow,
    change_weights,
    documents_by_key,
    function_key,
    history_weights,
    past_commits,
)
from riido_pg.ranking.policies import (
    STRUCTURE_BM25,
    STRUCTURE_CHANGE_PRIOR,
    STRUCTURE_HISTORY_PRIOR,
)
from riido_pg.splitting import split_identifiers
from riido_pg.storage import history as history_storage
from riido_pg.storage.snapshots import drop_snapshot

FUNCS = {
    "load_config": "    return open(x).read()",
    "parse_value": "    return x.strip()",
    "render_table": "    return '|'.join(x)",
    "send_email": "    return smtp.send(x)",
    "retry_request": "    return call(x)",
}
#: (function changed, its new body, the commit subject): later subjects resemble
#: earlier ones, so the prior lifts what those changed.
STEPS = [
    ("parse_value", "    return x.strip().lower()", "Fix parsing of config values"),
    ("load_config", "    return open(x).read().strip()", "Strip the config file when loading"),
    ("send_email", "    return smtp.send(x, retry=True)", "Retry sending an email"),
    ("parse_value", "    return x.strip().casefold()", "Fix parsing of quoted config values"),
    ("retry_request", "    return call(x) or call(x)", "Retry a failed request once"),
    ("render_table", "    return ' | '.join(x)", "Render table cells padded"),
    ("load_config", "    return open(x).read().strip() or ''", "Fix config loading of empty files"),
]


def _repo(path: Path, start: str = "Start the project") -> Repo:
    """The repository of STEPS (``start``: the first commit's subject; another gives
    every commit another id, so that tests do not share the commits stored)."""
    repo = Repo(path)
    funcs = dict(FUNCS)
    repo.write("app/core.py", python_module(funcs))
    repo.write("docs/conf.py", python_module({"setup": "    return x"}))
    repo.commit(start)
    for name, body, subject in STEPS:
        funcs[name] = body
        repo.write("app/core.py", python_module(funcs))
        repo.commit(subject)
    return repo


def _window(conn: psycopg.Connection[Any], snapshot_id: str) -> list[tuple[str, list[str]]]:
    """A snapshot's window in order: each commit and the ids of its documents."""
    rows = conn.execute(
        "SELECT w.commit, coalesce(array_agg(d.doc_id ORDER BY d.doc_id) "
        "FILTER (WHERE d.doc_id IS NOT NULL), '{}') "
        "FROM riido.window_commits AS w "
        "LEFT JOIN riido.snapshot_segments AS p ON p.snapshot_id = w.snapshot_id "
        "LEFT JOIN riido.documents AS d ON d.segment_id = p.segment_id "
        "AND d.doc_ord = ANY(w.doc_ords) "
        "WHERE w.snapshot_id = %s GROUP BY w.position, w.commit ORDER BY w.position",
        (snapshot_id,),
    ).fetchall()
    return [(str(c), list(ids)) for c, ids in rows]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every commit id the loads read from git, in order."""
    read: list[str] = []
    original = RevisionWindow.read

    def spy(self: RevisionWindow, shas: Sequence[str]) -> list[PastCommit]:
        read.extend(shas)
        return original(self, shas)

    monkeypatch.setattr(RevisionWindow, "read", spy)
    return read


def test_a_load_stores_each_commit_once_and_a_window_per_snapshot(
    conn: psycopg.Connection[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo")
    read = _counting(monkeypatch)
    load_snapshot(conn, "hp-old", tree_documents(repo.path, rev="HEAD~2"))
    old = past_commits(repo.path, "HEAD~2")
    assert sorted(read) == sorted(p.commit for p in old)  # every commit of its window, once
    load_snapshot(conn, "hp-new", tree_documents(repo.path, rev="HEAD"), base="hp-old")
    new = past_commits(repo.path, "HEAD")
    assert sorted(read[len(old) :]) == sorted(p.commit for p in new[:2])  # only the two new
    base = conn.execute("SELECT base FROM riido.snapshots WHERE snapshot_id = 'hp-new'").fetchone()
    assert base == ("hp-old",)  # on a base: a window of its own
    assert conn.execute("SELECT count(*) FROM riido.commits").fetchone() == (len(new),)
    for snapshot_id, past, rev in (("hp-old", old, "HEAD~2"), ("hp-new", new, "HEAD")):
        ids = [d.id for d in tree_documents(repo.path, rev=rev)]
        by_key = documents_by_key({i: n for n, i in enumerate(ids)})
        want = [(p.commit, sorted(ids[n] for k in p.keys for n in by_key.get(k, ()))) for p in past]
        assert _window(conn, snapshot_id) == want
        assert any(docs for _, docs in want) and any(not docs for _, docs in want)
    stored = conn.execute(
        "SELECT w.lexemes FROM riido.window_commits AS w "
        "WHERE w.snapshot_id = 'hp-new' ORDER BY w.position"
    ).fetchall()
    analysed = conn.execute(
        "SELECT tsvector_to_array(to_tsvector('english', t)) FROM unnest(%s::text[]) "
        "WITH ORDINALITY AS x(t, n) ORDER BY n",
        ([split_identifiers(p.subject) for p in new],),
    ).fetchall()
    assert stored == analysed
    # a parallel load stores the same window
    load_snapshot(conn, "hp-par", tree_documents(repo.path, rev="HEAD"), jobs=2, fresh=True)
    assert _window(conn, "hp-par") == _window(conn, "hp-new")
    drop_snapshot(conn, "hp-par")
    # a work tree, a list of documents: no window; dropping a snapshot drops its window
    load_snapshot(conn, "hp-tree", tree_documents(repo.path))
    load_snapshot(conn, "hp-list", [Document("a.py:f:1", "def f(): pass")])
    assert _window(conn, "hp-tree") == _window(conn, "hp-list") == []
    load_snapshot(conn, "hp-old", tree_documents(repo.path), replace=True)
    assert _window(conn, "hp-old") == []  # replaced by a work tree: none
    drop_snapshot(conn, "hp-new")
    assert conn.execute("SELECT count(*) FROM riido.window_commits").fetchone() == (0,)


def test_no_window_reads_no_past_commit(
    cli: Any, conn: psycopg.Connection[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo", "Start the project without a window")
    read = _counting(monkeypatch)
    result = cli(["load", "hp-nowin", str(repo.path), "--rev", "HEAD", "--no-window"])
    assert result.code == 0, result.stderr
    assert read == []  # nothing read from git for a window
    assert _window(conn, "hp-nowin") == []
    # the rest of the revision's load is as with a window: its recent set is stored
    recent = conn.execute(
        "SELECT cardinality(recent) FROM riido.snapshots WHERE snapshot_id = 'hp-nowin'"
    ).fetchone()
    assert recent is not None and recent[0] > 0
    # a work tree has no window to leave out: refused, nothing stored
    refused = cli(["load", "hp-nowin-tree", str(repo.path), "--no-window"])
    assert (refused.code, refused.stdout) == (2, "")
    assert (
        refused.stderr == "error: --no-window applies with --rev only (a work tree has no window)\n"
    )
    stored = conn.execute(
        "SELECT count(*) FROM riido.snapshots WHERE snapshot_id = 'hp-nowin-tree'"
    ).fetchone()
    assert stored == (0,)
    # from Python: TreeOptions(window=False) alike
    Facade(conn).load("hp-nowin-py", repo.path, tree=TreeOptions(rev="HEAD", window=False))
    assert read == [] and _window(conn, "hp-nowin-py") == []


def test_a_subject_of_megabytes_is_cut_as_a_question_would_be(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    # a first line of 2.6 MB of distinct words: analysed whole, its tsvector would
    # pass the server's 1 MB limit and fail the load
    repo = _repo(tmp_path / "repo", "Start the project with a long subject")
    words = " ".join(f"w{i}x{i * 7919 % 1000003}" for i in range(150_000)) + " é"
    message = tmp_path / "message.txt"
    message.write_text(words, encoding="utf-8")
    repo.write("app/core.py", python_module({**FUNCS, "parse_value": "    return x"}))
    repo.git("add", "-A")
    repo.ticks += 1
    repo.git("commit", "-q", "-F", str(message))
    (newest,) = past_commits(repo.path, "HEAD", 1)
    cut = newest.subject.encode("utf-8")
    assert len(cut) <= MAX_QUERY_BYTES < len(words.encode("utf-8"))
    assert words.startswith(newest.subject) and len(cut) > MAX_QUERY_BYTES - 4
    load_snapshot(conn, "hp-long", tree_documents(repo.path, rev="HEAD"))
    assert [c for c, _ in _window(conn, "hp-long")] == [
        p.commit for p in past_commits(repo.path, "HEAD")
    ]
    ranked = rank_snapshot(conn, "hp-long", "w1x7919 parse value", policy=STRUCTURE_BM25)
    assert ranked.candidates and ranked.candidates[0].id.startswith("app/core.py:parse_value:")


def test_a_subdirectory_resolves_its_own_keys(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo", "Start the project in app")
    load_snapshot(conn, "hp-sub", tree_documents(repo.path / "app", rev="HEAD"))
    window = _window(conn, "hp-sub")
    past = past_commits(repo.path / "app", "HEAD")
    assert [c for c, _ in window] == [p.commit for p in past]
    for (_, ids), p in zip(window, past, strict=True):
        assert {function_key(i) for i in ids} == set(p.keys)


def test_a_window_read_in_chunks_on_threads_is_the_same(
    conn: psycopg.Connection[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo")
    load_snapshot(conn, "hp-whole", tree_documents(repo.path, rev="HEAD"))
    whole = _window(conn, "hp-whole")
    conn.execute("DELETE FROM riido.window_commits")
    conn.execute("DELETE FROM riido.commits")
    monkeypatch.setattr(history_storage, "READ_CHUNK", 1)  # a chunk per commit
    read = _counting(monkeypatch)
    for jobs in (1, 2):
        snapshot_id = f"hp-chunks-{jobs}"
        load_snapshot(conn, snapshot_id, tree_documents(repo.path, rev="HEAD"), jobs=jobs)
        assert _window(conn, snapshot_id) == whole
    assert sorted(read) == sorted(c for c, _ in whole)  # each once, the second load none
    assert len(whole) > history_storage.READ_THREADS


def test_a_failed_load_leaves_no_window(
    conn: psycopg.Connection[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo", "Start the failing project")
    monkeypatch.setattr(history_storage, "READ_CHUNK", 2)
    calls: list[int] = []
    original = RevisionWindow.read

    def failing(self: RevisionWindow, shas: Sequence[str]) -> list[PastCommit]:
        calls.append(len(shas))
        if len(calls) == 2:  # the first chunk is stored by then
            raise RuntimeError("git went away")
        return original(self, shas)

    monkeypatch.setattr(RevisionWindow, "read", failing)
    with pytest.raises(RuntimeError, match="git went away"):
        load_snapshot(conn, "hp-fail", tree_documents(repo.path, rev="HEAD"))
    assert conn.execute(
        "SELECT (SELECT count(*) FROM riido.snapshots WHERE snapshot_id = 'hp-fail'), "
        "(SELECT count(*) FROM riido.window_commits WHERE snapshot_id = 'hp-fail'), "
        "(SELECT count(*) FROM riido.commits WHERE commit = ANY(%s))",
        ([p.commit for p in past_commits(repo.path, "HEAD")],),
    ).fetchone() == (0, 0, 0)


# -- the score, on snapshots given a window ------------------------------------------


class FixedWindow(RevisionWindow):
    """A window of made-up commits (a load of a revision, without git)."""

    __slots__ = ("past",)

    def __init__(self, past: list[PastCommit]) -> None:
        super().__init__(Path("."), "HEAD")
        object.__setattr__(self, "past", past)

    @property
    def prefix(self) -> str:
        return ""

    def shas(self) -> list[str]:
        return [p.commit for p in self.past]

    def read(self, shas: Sequence[str]) -> list[PastCommit]:
        return [p for p in self.past if p.commit in set(shas)]


QUERIES = [
    "parse a quoted string",
    "read config file sections",
    "encode json object to string",
    "wrap text paragraphs to width",
    "fnmatch translate",
    "fix the config parser",
    "test that the decoder raises on bad input",
    "docs example of a pattern",
    "zzzz nothing",
]
SUBJECTS = [
    "Fix parsing of quoted strings",
    "Read config sections in order",
    "Encode nested json objects",
    "Fix config parser defaults",
    "Wrap long text at the width",
    "Translate shell patterns",
    "Update the changelog",
    "Fix parsing of quoted strings in config files",
    "",
    "Release 1.0",
]


def _past(ids: list[str], salt: str) -> list[PastCommit]:
    """Commits with the subjects above, each changing a few documents (by key), one
    key no document has, one commit changing nothing; repeated, 40 in all."""
    keys = sorted({function_key(i) for i in ids})
    out = []
    for n in range(40):
        subject = SUBJECTS[n % len(SUBJECTS)]
        changed = {keys[(n * 7 + j * 13) % len(keys)] for j in range(n % 4)}
        if n % 9 == 0:
            changed.add("gone.py:missing")
        out.append(PastCommit(f"{salt}{n:038d}", subject, frozenset(changed)))
    return out


@pytest.fixture(scope="module")
def snapshots(db: Database) -> dict[str, list[Document]]:
    docs = [
        *stdlib_functions(250),
        Document("tests/test_config.py:test_parse_config:1", "def test_parse_config(): parse"),
        Document("examples/read_json.py:main:1", "def main(): read json value config file"),
    ]
    ids = [d.id for d in docs]
    kept = [d for i, d in enumerate(docs) if i % 5 != 0]
    changed = [
        Document(d.id, d.text + " parse config") if i % 7 == 0 else d for i, d in enumerate(kept)
    ]
    on_base = [*changed, Document("zz.py:parse_json:1", "def parse_json(line): pass")]
    with db.connect() as conn:
        load_snapshot(conn, "hpw", _stream(docs, _past(ids, "a")))
        load_snapshot(conn, "hpw-none", docs)
        # on a base: documents removed and changed (their commits from the base's
        # window and new ones, the same commit ids stored once)
        load_snapshot(
            conn, "hpw2", _stream(on_base, _past(ids, "b")[:20] + _past(ids, "a")[:20]), base="hpw"
        )
        assert conn.execute(
            "SELECT base FROM riido.snapshots WHERE snapshot_id = 'hpw2'"
        ).fetchone() == ("hpw",)
    return {"hpw": docs, "hpw2": on_base}


def _stream(docs: list[Document], past: list[PastCommit]) -> DocumentStream:
    return DocumentStream(lambda: iter(docs), where="hpw", checked=False, history=FixedWindow(past))


def _expected(
    conn: psycopg.Connection[Any],
    snapshot_id: str,
    docs: list[Document],
    query: str,
    params: dict[str, float] | None = None,
) -> dict[str, float]:
    """Each document's score from the definition: the score without the priors (the
    same snapshot ranked with β = 0 and γ = 0) times 1 + β · H / max H, H from
    history_weights over the window (subjects analysed as a question's identifier
    lexemes, documents by key), times 1 + γ · C / max C, C from change_weights over the
    same window."""
    rows = conn.execute(
        "SELECT c.subject, c.keys FROM riido.window_commits AS w "
        "JOIN riido.commits AS c ON c.commit = w.commit "
        "WHERE w.snapshot_id = %s ORDER BY w.position",
        (snapshot_id,),
    ).fetchall()

    def lexemes(text: str) -> list[str]:
        row = conn.execute(
            "SELECT tsvector_to_array(to_tsvector('english', %s))", (split_identifiers(text),)
        ).fetchone()
        assert row is not None
        return list(row[0])

    ids = sorted(d.id for d in docs)
    by_key = documents_by_key({i: n for n, i in enumerate(ids)})
    subjects = [lexemes(s) for s, _ in rows]
    changed = [[n for k in keys for n in by_key.get(k, ())] for _, keys in rows]
    weights = history_weights(lexemes(query), subjects, changed)
    often = change_weights(changed)
    given = dict(params or {})
    beta = given.pop("history_prior", STRUCTURE_HISTORY_PRIOR)
    gamma = given.pop("change_prior", STRUCTURE_CHANGE_PRIOR)
    without = rank_snapshot(
        conn,
        snapshot_id,
        query,
        policy=STRUCTURE_BM25,
        params={**given, "history_prior": 0.0, "change_prior": 0.0},
    )
    return {
        c.id: c.score
        * (1.0 + beta * weights.get(ids.index(c.id), 0.0))
        * (1.0 + gamma * often.get(ids.index(c.id), 0.0))
        for c in without.candidates
    }


@pytest.mark.parametrize("snapshot_id", ["hpw", "hpw2"])
@pytest.mark.parametrize("query", QUERIES)
def test_the_score_is_the_definitions_on_every_path(
    conn: psycopg.Connection[Any],
    snapshots: dict[str, list[Document]],
    snapshot_id: str,
    query: str,
) -> None:
    docs = snapshots[snapshot_id]
    got = rank_snapshot(conn, snapshot_id, query, policy=STRUCTURE_BM25)
    want = _expected(conn, snapshot_id, docs, query)
    assert {c.id: c.score for c in got.candidates} == want  # exactly
    order = sorted(want, key=lambda i: (-want[i] if want[i] > 0 else 0.0, i.encode()))
    assert [c.id for c in got.candidates] == order
    for k in (1, 2, 3, 5, 10, 40):
        top = rank_snapshot(conn, snapshot_id, query, policy=STRUCTURE_BM25, limit=k)
        assert top.candidates == got.candidates[:k], k
    rows = conn.execute(
        "SELECT id, score FROM riido.search(%s, %s, %s, %s, NULL)",
        (snapshot_id, query, 60, STRUCTURE_BM25),
    ).fetchall()
    assert [(str(i), float(s)) for i, s in rows] == [(c.id, c.score) for c in got.candidates[:60]]


@pytest.mark.parametrize(
    "params",
    [
        {"name_match": 1.0},  # one step, with the length prior
        {"name_match": 1.0, "length_prior": 0.0},  # one step, nothing read after
        {"length_prior": 0.0, "history_prior": 2.0},  # two steps without lengths
        {"history_prior": 0.0},  # the change-history prior alone
        {"history_prior": 0.0, "change_prior": 3.0, "name_match": 1.0},  # alone, one step
        {"change_prior": 0.0},  # the history-similarity prior alone
        {"change_prior": 2.5, "length_prior": 0.0},  # both, two steps without lengths
    ],
)
def test_every_form_of_the_statement_applies_it(
    conn: psycopg.Connection[Any], snapshots: dict[str, list[Document]], params: dict[str, float]
) -> None:
    for snapshot_id in ("hpw", "hpw2"):
        for query in QUERIES[:6]:
            got = rank_snapshot(conn, snapshot_id, query, policy=STRUCTURE_BM25, params=params)
            want = _expected(conn, snapshot_id, snapshots[snapshot_id], query, params)
            assert {c.id: c.score for c in got.candidates} == want
            for k in (1, 3, 10):
                top = rank_snapshot(
                    conn, snapshot_id, query, policy=STRUCTURE_BM25, params=params, limit=k
                )
                assert top.candidates == got.candidates[:k], (query, k)


def test_beta_and_gamma_zero_are_the_ranking_without_a_window(
    conn: psycopg.Connection[Any], snapshots: dict[str, list[Document]]
) -> None:
    lifted = 0
    for query in QUERIES:
        off = rank_snapshot(
            conn,
            "hpw",
            query,
            policy=STRUCTURE_BM25,
            params={"history_prior": 0.0, "change_prior": 0.0},
        )
        none = rank_snapshot(conn, "hpw-none", query, policy=STRUCTURE_BM25)
        assert [(c.id, c.score) for c in off.candidates] == [
            (c.id, c.score) for c in none.candidates
        ]
        on = rank_snapshot(conn, "hpw", query, policy=STRUCTURE_BM25)
        lifted += [(c.id, c.score) for c in on.candidates] != [
            (c.id, c.score) for c in none.candidates
        ]
    assert lifted >= 4  # the prior changes most of these rankings


def _beir(tmp_path: Path, docs: list[Document]) -> tuple[Path, dict[str, str], dict[str, str]]:
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d.id, "text": d.text}) + "\n" for d in docs)
    )
    questions = {f"q{i}": q for i, q in enumerate(QUERIES[:-1])}
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in questions.items())
    )
    targets = {k: docs[(11 * i + 3) % len(docs)].id for i, k in enumerate(questions)}
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{k}\t{v}\t1\n" for k, v in targets.items())
    )
    return beir, questions, targets


def test_eval_ranks_as_the_sql_ranking_with_a_window(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """A stored corpus given a window (its snapshot replaced by a load with one):
    eval's numpy path ranks every question's target where the SQL ranking does, with
    and without the prior, and reports β."""
    docs = [*stdlib_functions(150)]
    beir, questions, targets = _beir(tmp_path, docs)
    # the corpus's snapshot, loaded first with a window: storing the corpus keeps it
    snapshot_id = store_corpus(conn, beir).snapshot_id
    drop_snapshot(conn, snapshot_id)
    ids = [d.id for d in docs]
    load_snapshot(
        conn,
        snapshot_id,
        DocumentStream(
            lambda: iter(docs), where="beir", checked=False, history=FixedWindow(_past(ids, "e"))
        ),
    )
    stored = store_corpus(conn, beir)
    assert stored.snapshot_id == snapshot_id
    assert _window(conn, stored.snapshot_id)
    for params in (
        {},
        {"history_prior": 0.0},
        {"history_prior": 2.0},
        {"change_prior": 0.0},
        {"history_prior": 0.0, "change_prior": 3.0},
    ):
        result = evaluate(
            conn,
            stored.snapshot_id,
            policies=[STRUCTURE_BM25],
            params=params or None,
        )
        for r in result.results:
            ranking = rank_snapshot(
                conn,
                stored.snapshot_id,
                questions[r.question_id],
                policy=STRUCTURE_BM25,
                params=params or None,
            )
            first = next(c.rank for c in ranking.candidates if c.id == targets[r.question_id])
            assert r.ranks[STRUCTURE_BM25] == first, (params, r.question_id)
        policy_params = result.to_dict()["config"]["policy_params"]
        assert policy_params[STRUCTURE_BM25]["history_prior"] == params.get(
            "history_prior", STRUCTURE_HISTORY_PRIOR
        )
        assert policy_params[STRUCTURE_BM25]["change_prior"] == params.get(
            "change_prior", STRUCTURE_CHANGE_PRIOR
        )


def _similar_repo(path: Path) -> Repo:
    return _repo(path, "Start the evaluated project")


def test_eval_of_a_history_corpus_ranks_as_rank_snapshot(
    conn: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """A real small git history: every snapshot eval loads has its window, the prior
    moves some question's scores, and eval's ranks are rank_snapshot's."""
    repo = _similar_repo(tmp_path / "repo")
    directory = history_corpus(repo, tmp_path / "hist", name="hp-hist")
    done = Facade(conn).evaluate([directory], policies=[STRUCTURE_BM25])
    moved = 0
    from riido_pg.corpora.history import read_history_corpus

    hc = read_history_corpus(directory)
    ranks = []
    for q in hc.questions:
        assert _window(conn, q.snapshot_id), q.snapshot_id
        ranking = rank_snapshot(conn, q.snapshot_id, q.text, policy=STRUCTURE_BM25)
        off = rank_snapshot(
            conn,
            q.snapshot_id,
            q.text,
            policy=STRUCTURE_BM25,
            params={"history_prior": 0.0, "change_prior": 0.0},
        )
        moved += [c.score for c in ranking.candidates] != [c.score for c in off.candidates]
        ids = [c.id for c in ranking.candidates]
        ranks.append(min(ids.index(t) for t in q.targets) + 1)
    assert moved >= 1
    n = len(ranks)
    mrr = done.evaluation.to_dict()["policies"][STRUCTURE_BM25]["mrr"]
    assert mrr == pytest.approx(sum(1 / r for r in ranks) / n, abs=5e-5)


def test_a_moved_snapshot_takes_its_window_and_its_commits(
    db: Database, snapshots: dict[str, list[Document]]
) -> None:
    """copy_snapshot (``snapshots move``) copies the window and the commits it names
    (the target keeps commits it holds), so the copy ranks alike."""
    import uuid

    from psycopg.conninfo import make_conninfo

    from riido_pg.server import migrate
    from riido_pg.storage.copying import copy_snapshot

    name = f"hp_copy_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(db.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        dsn = make_conninfo(db.dsn, dbname=name)
        migrate.upgrade(dsn)
        with db.connect() as source, psycopg.connect(dsn, autocommit=True) as target:
            for snapshot_id in ("hpw", "hpw2"):  # hpw2 shares commits with hpw
                with target.transaction():
                    copy_snapshot(source, target, snapshot_id)
                assert _window(target, snapshot_id) == _window(source, snapshot_id)
                for query in QUERIES[:4]:
                    want = rank_snapshot(source, snapshot_id, query, policy=STRUCTURE_BM25)
                    got = rank_snapshot(target, snapshot_id, query, policy=STRUCTURE_BM25)
                    assert got.candidates == want.candidates
            assert target.execute("SELECT count(*) FROM riido.commits").fetchone() == (60,)
    finally:
        with psycopg.connect(db.dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_change_weights_are_the_definition() -> None:
    """C(f) = Σ exp(-age / τ) over the window commits (age 0: the newest) that changed
    f, each commit counted once per document, divided by the largest C."""
    import math

    from riido_pg.extract.similar import CHANGE_TAU

    changed = [[3, 1], [1, 1], [], [7], [3]]
    c = {
        1: 1.0 + math.exp(-1 / CHANGE_TAU),
        3: 1.0 + math.exp(-4 / CHANGE_TAU),
        7: math.exp(-3 / CHANGE_TAU),
    }
    top = max(c.values())
    assert change_weights(changed) == pytest.approx({d: v / top for d, v in c.items()}, abs=0)
    assert change_weights([[], []]) == {}
    assert change_weights([]) == {}
    # how recently weighs more than how often once the commits are old enough
    old = [[5]] + [[]] * 60 + [[6]] * 2
    weights = change_weights(old)
    assert weights[5] == 1.0 and weights[6] < 1.0


def test_the_change_prior_lifts_what_was_changed_often_and_lately(
    conn: psycopg.Connection[Any], snapshots: dict[str, list[Document]]
) -> None:
    """With the history-similarity prior off, γ > 0 raises the scores of the documents
    the window changed, and only theirs."""
    query = QUERIES[2]
    changed_ids = {
        str(i)
        for (i,) in conn.execute(
            "SELECT d.doc_id FROM riido.window_commits AS w "
            "CROSS JOIN LATERAL unnest(w.doc_ords) AS u(doc_ord) "
            "JOIN riido.snapshot_segments AS p ON p.snapshot_id = w.snapshot_id "
            "JOIN riido.documents AS d ON d.segment_id = p.segment_id AND d.doc_ord = u.doc_ord "
            "WHERE w.snapshot_id = 'hpw'"
        ).fetchall()
    }
    assert changed_ids
    params = {"history_prior": 0.0}
    on = rank_snapshot(conn, "hpw", query, policy=STRUCTURE_BM25, params=params)
    off = rank_snapshot(
        conn, "hpw", query, policy=STRUCTURE_BM25, params={**params, "change_prior": 0.0}
    )
    before = {c.id: c.score for c in off.candidates}
    moved = {c.id for c in on.candidates if c.score != before[c.id]}
    assert moved and moved <= changed_ids
    assert all(c.score >= before[c.id] for c in on.candidates)
