"""Small repositories with a history of sentence-like commits, and their history
corpora (``riido-pg corpus history``), for the tests of ``eval`` over them.

Each commit changes one function of a module of a dozen, so each gives a question
whose target is that function in its parent's tree; the subjects share words with
some functions and not others, so the policies rank them differently.
"""

from __future__ import annotations

from pathlib import Path

from riido_pg.corpora.history import HistoryOptions, build
from support.gitrepos import Repo

__all__ = ["GO_STEPS", "PY_STEPS", "history_corpus", "history_repo"]

PY_FUNCS = {
    "load_config": "return open(path).read()",
    "save_config": "return write(path, text)",
    "parse_value": "return text.strip()",
    "render_table": "return '|'.join(rows)",
    "fetch_user": "return db.get(user_id)",
    "hash_password": "return sha(secret)",
    "send_email": "return smtp.send(to, body)",
    "retry_request": "return call()",
    "close_socket": "return sock.close()",
    "merge_dicts": "return {**a, **b}",
}
#: (function changed, its new body, the commit subject)
PY_STEPS = [
    ("parse_value", "return text.strip().lower()", "Lower case every parsed value"),
    ("fetch_user", "return db.get(user_id) or None", "Tolerate absent rows in lookups"),
    ("load_config", "return open(path).read().strip()", "Strip the config file when loading it"),
    ("send_email", "return smtp.send(to, body, retry=True)", "Retry when sending an email fails"),
    ("render_table", "return ' | '.join(rows)", "Pad the cells of every row with spaces"),
]

GO_FUNCS = {
    "OpenStore": "return nil",
    "CloseStore": "return nil",
    "ReadKey": "return key",
    "WriteKey": "return value",
    "ListKeys": "return keys",
    "CountKeys": "return len(keys)",
}
GO_STEPS = [
    ("ReadKey", "return strings.TrimSpace(key)", "Trim spaces around every key read"),
    ("CountKeys", "return len(keys) + 0", "Count the keys of an empty store as zero"),
    ("CloseStore", "return errors.New(closed)", "Report an error when closing the store twice"),
]


def _python(funcs: dict[str, str]) -> str:
    return "\n\n".join(
        f"def {name}(path, text, rows, user_id, secret, to, body, a, b, sock):\n    {body}\n"
        for name, body in funcs.items()
    )


def _go(funcs: dict[str, str]) -> str:
    return "package store\n\n" + "\n".join(
        f"func {name}(key string) string {{\n\t{body}\n}}\n" for name, body in funcs.items()
    )


def history_repo(path: Path, *, go: bool = False) -> Repo:
    """A repository whose every commit after the first is one question."""
    repo = Repo(path)
    funcs = dict(GO_FUNCS if go else PY_FUNCS)
    rel, render = ("store/store.go", _go) if go else ("app/core.py", _python)
    repo.write(rel, render(funcs))
    repo.commit("Start the project with its first functions")
    for name, body, subject in GO_STEPS if go else PY_STEPS:
        funcs[name] = body
        repo.write(rel, render(funcs))
        repo.commit(subject)
    return repo


def history_corpus(repo: Repo, out: Path, **options: object) -> Path:
    """The history corpus of ``repo`` in ``out`` (``corpus history``'s library)."""
    build(repo.path, out, HistoryOptions(**options))  # type: ignore[arg-type]
    return out
