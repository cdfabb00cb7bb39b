"""riido_pg.embedding: the registry, the pure vector helpers, and the real
``wordllama-256`` model (no mock) on a tiny corpus.

The tests that load the model need the ``model`` extra; without it they are skipped
with the pip command as the reason. No test needs a database.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from riido_pg.cli.errors import exit_code
from riido_pg.embedding import (
    ENTRY_POINT_GROUP,
    MODELS,
    CheckedModel,
    EmptyEmbedding,
    ModelNotInstalled,
    UnknownModel,
    cosine_order,
    embed_query,
    from_bytea,
    known_models,
    l2_normalise,
    load_model,
    matrix_from_bytea,
    register_model,
    to_bytea,
    unregister_model,
)
from riido_pg.errors import InvalidInput


def _extra_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("wordllama", "tokenizers"))


needs_model = pytest.mark.skipif(
    not _extra_installed(), reason="needs the model extra: pip install 'riido-pg[model]'"
)

CORPUS = [
    "def read_config(path):\n    with open(path) as fh:\n        return json.load(fh)",
    "def add(a, b):\n    return a + b",
    "class HttpClient:\n    def get(self, url):\n        return requests.get(url)",
    "def add(a, b):\n    return a + b",  # a duplicate of document 1: a cosine tie
    "def parse_date(text):\n    return datetime.strptime(text, '%Y-%m-%d')",
]


@pytest.fixture(scope="module")
def model() -> CheckedModel:
    if not _extra_installed():
        pytest.skip("needs the model extra: pip install 'riido-pg[model]'")
    return load_model("wordllama-256")


# ------------------------------------------------------------------ pure helpers


def test_cosine_order_is_by_score_then_index() -> None:
    docs, _ = l2_normalise([[1, 0], [0, 1], [1, 0], [1, 1], [0, 1]])
    q = np.array([1.0, 0.0], dtype=np.float32)
    # scores 1, 0, 1, 0.707, 0: the ties (0, 2) and (1, 4) keep index order
    assert cosine_order(q, docs) == [0, 2, 3, 1, 4]
    assert cosine_order(q, docs, candidates=[4, 1, 3, 4]) == [3, 1, 4]
    assert cosine_order(q, docs, candidates=[]) == []
    # a zero query scores everything 0: index order
    assert cosine_order(np.zeros(2, dtype=np.float32), docs) == [0, 1, 2, 3, 4]
    with pytest.raises(IndexError):
        cosine_order(q, docs, candidates=[5])
    with pytest.raises(ValueError):
        cosine_order(np.ones(3, dtype=np.float32), docs)


def test_l2_normalise_marks_zero_rows() -> None:
    out, empty = l2_normalise([[3, 4], [0, 0]])
    assert out.dtype == np.float32
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    assert empty.tolist() == [False, True]


def test_bytea_round_trip_is_exact_little_endian() -> None:
    rng = np.random.default_rng(7)
    v = rng.standard_normal(256).astype(np.float32)
    data = to_bytea(v)
    assert len(data) == 4 * 256
    assert data[:4] == np.float32(v[0]).astype("<f4").tobytes()
    assert np.array_equal(from_bytea(data, 256), v)
    assert np.array_equal(from_bytea(memoryview(data), 256), v)
    m = rng.standard_normal((3, 8)).astype(np.float32)
    assert np.array_equal(matrix_from_bytea([to_bytea(r) for r in m], 8), m)
    assert matrix_from_bytea([], 8).shape == (0, 8)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45], dtype=np.float32)
    assert to_bytea(from_bytea(to_bytea(special), 5)) == to_bytea(special)
    with pytest.raises(ValueError, match="not 256 float32"):
        from_bytea(data[:-1], 256)
    with pytest.raises(ValueError):
        matrix_from_bytea([data, data[:8]], 256)


# ---------------------------------------------------------------------- registry


def test_unknown_model_lists_the_known_ones() -> None:
    with pytest.raises(UnknownModel) as err:
        load_model("no-such-model")
    assert isinstance(err.value, InvalidInput)
    assert exit_code(err.value) == 2
    msg = str(err.value)
    assert "'no-such-model'" in msg
    for name in MODELS:
        assert name in msg


class CharBag:
    """A user's own model: letter counts (a real, if crude, embedding)."""

    name = "char-bag"
    dim = 26

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 26))  # float64, not normalised: load_model fixes both
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out


@pytest.fixture
def char_bag() -> Iterator[str]:
    register_model("char-bag", CharBag, dim=26, description="letter counts")
    yield "char-bag"
    unregister_model("char-bag")


def test_a_registered_user_model_loads_checked_and_normalised(char_bag: str) -> None:
    m = load_model(char_bag)
    assert (m.name, m.dim) == ("char-bag", 26)
    x = m.embed(["abc", "zzz", "", "123"])
    assert x.dtype == np.float32 and x.shape == (4, 26)
    assert np.allclose(np.linalg.norm(x[:2], axis=1), 1.0)
    assert m.last_empty.tolist() == [False, False, True, True]
    with pytest.raises(EmptyEmbedding) as err:
        embed_query(m, "123")  # no letter: the model maps it to the zero vector
    assert exit_code(err.value) == 2
    with pytest.raises(UnknownModel) as unknown:
        load_model("missing")
    assert char_bag in str(unknown.value)
    with pytest.raises(ValueError, match="already registered"):
        register_model(char_bag, CharBag)


def test_a_model_with_the_wrong_shape_is_refused(char_bag: str) -> None:
    class Short(CharBag):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return np.ones((len(texts), 3))

    register_model("short", Short)
    try:
        with pytest.raises(ValueError, match="returned shape"):
            load_model("short").embed(["abc"])
    finally:
        unregister_model("short")


def test_a_user_model_missing_its_package_names_it() -> None:
    def factory() -> CharBag:
        raise ImportError("No module named 'fancylib'", name="fancylib")

    register_model("fancy", factory, install="pip install fancylib")
    try:
        with pytest.raises(ModelNotInstalled) as err:
            load_model("fancy")
    finally:
        unregister_model("fancy")
    assert exit_code(err.value) == 2
    assert "fancylib" in str(err.value) and "pip install fancylib" in str(err.value)


def test_a_model_from_an_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution declaring ``riido_pg.models`` makes its model loadable."""
    (tmp_path / "riido_user_model.py").write_text(
        "import numpy as np\n"
        "class Ones:\n"
        "    name = 'ones'\n"
        "    dim = 4\n"
        "    def embed(self, texts):\n"
        "        return np.ones((len(texts), 4))\n"
        "def make():\n"
        "    return Ones()\n"
    )
    info = tmp_path / "riido_user_model-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: riido-user-model\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nuser-ones = riido_user_model:make\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "user-ones" in known_models()
    m = load_model("user-ones")
    assert m.dim == 4
    assert np.allclose(m.embed(["x"]), 0.5)


def test_missing_packages_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if not installed
    with pytest.raises(ModelNotInstalled) as err:
        load_model("wordllama-256")
    assert exit_code(err.value) == 2
    assert "pip install 'riido-pg[model]'" in str(err.value)


@needs_model
def test_missing_tokenizers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(ModelNotInstalled, match=r"pip install 'riido-pg\[model\]'"):
        load_model("wordllama-256")


def test_importing_the_package_stays_light() -> None:
    import subprocess

    code = (
        "import sys, riido_pg, riido_pg.embedding; "
        "print(sorted(m for m in ('tokenizers', 'safetensors', 'wordllama', 'torch') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------- the real model


@needs_model
def test_dims_normalisation_and_dtype(model: CheckedModel) -> None:
    assert (model.name, model.dim) == ("wordllama-256", 256)
    x = model.embed(CORPUS)
    assert x.shape == (len(CORPUS), 256) and x.dtype == np.float32
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-6)
    assert model.embed([]).shape == (0, 256)
    with pytest.raises(TypeError):
        model.embed("one string")


@needs_model
def test_deterministic_across_loads_and_batches(model: CheckedModel) -> None:
    a = model.embed(CORPUS)
    b = load_model("wordllama-256").embed(CORPUS)
    assert to_bytea(a) == to_bytea(b)
    one_by_one = np.vstack([model.embed([t]) for t in CORPUS])
    assert np.allclose(a, one_by_one, atol=1e-6)


@needs_model
def test_same_vectors_as_wordllama_itself(model: CheckedModel) -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # its import calls logging.basicConfig(level=INFO)

        pkg = Path(wordllama.__file__).parent
        ref = wordllama.WordLlama.load(cache_dir=pkg, disable_download=True)
        expected = ref.embed(list(CORPUS), norm=True)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert np.allclose(model.embed(CORPUS), expected, atol=1e-5)


@needs_model
def test_cosine_ranks_and_ties_on_a_tiny_corpus(model: CheckedModel) -> None:
    docs = model.embed(CORPUS)
    order = cosine_order(embed_query(model, "read the json config file"), docs)
    assert sorted(order) == list(range(len(CORPUS)))
    assert order[0] == 0
    # documents 1 and 3 are identical: same score, index order, adjacent
    q = embed_query(model, "add two numbers")
    order = cosine_order(q, docs)
    assert order.index(3) == order.index(1) + 1
    assert cosine_order(q, docs, candidates=[3, 1, 4])[:2] == [1, 3]


@needs_model
def test_a_blank_query_embeds_to_nothing(model: CheckedModel) -> None:
    for text in ("", "   ", "\t\n"):
        with pytest.raises(EmptyEmbedding) as err:
            embed_query(model, text)
        assert exit_code(err.value) == 2
    x = model.embed(["", "def f(): pass"])
    assert model.last_empty.tolist() == [True, False]
    assert not x[0].any()
    q = embed_query(model, "x")
    assert q.dtype == np.float32 and abs(float(np.linalg.norm(q)) - 1.0) < 1e-6


@needs_model
def test_stored_vectors_round_trip(model: CheckedModel) -> None:
    x = model.embed(CORPUS)
    back = matrix_from_bytea([to_bytea(r) for r in x], model.dim)
    assert np.array_equal(back, x)
    q = embed_query(model, "http get url")
    assert cosine_order(q, back) == cosine_order(q, x)
