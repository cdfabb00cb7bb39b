"""Benchmark corpora: deterministic synthetic functions, or CoSQA replicated.

Synthetic (:func:`synthetic_documents`): function-sized documents (300-1,000 bytes)
in Python, Go, JavaScript and Java shapes, with camelCase / PascalCase / snake_case /
UPPER_SNAKE identifiers, docstrings or doc comments, keywords, string literals and
numbers. Identifiers are compounds of ~420 English programming words, ~4,000
distinct identifiers drawn with a Zipf-like law (s = 1.1), so document frequencies
look like real code: a few terms in most documents, a long tail of rare ones.
Document ``i`` depends only on (seed, i), so a 3,000-document corpus is a prefix of
the 100,000-document one. Queries (:func:`synthetic_queries`) are short English
questions over the same words ("how to parse json config from file").

CoSQA (:func:`cosqa_documents`): the 6,267 real Python functions of
``../shared/data/cosqa-dev/corpus.jsonl`` beside the checkout (or ``$RIIDO_BENCH_COSQA``), replicated
with id suffixes (``c42``, ``c42~1``, ``c42~2``, ...) up to the asked count. The
data is read in place and never copied into the repository (C-UDA).

    python bench/corpus.py --count 5 --show          # print a few documents
    python bench/corpus.py --count 100000 --jsonl /tmp/docs.jsonl
"""

# ruff: noqa: E501  (long generator templates read better on one line)
from __future__ import annotations

import bisect
import itertools
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

from riido_pg.documents import Document

__all__ = [
    "COSQA_DIR",
    "cosqa_available",
    "cosqa_documents",
    "cosqa_queries",
    "development_corpora",
    "documents",
    "queries",
    "synthetic_documents",
    "synthetic_queries",
    "tiny_documents",
    "write_jsonl",
]

#: The development data lives beside the checkout (``../shared/data/cosqa-dev``), never in it.
COSQA_DIR = Path(
    os.environ.get(
        "RIIDO_BENCH_COSQA",
        Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cosqa-dev",
    )
)


def development_corpora(docproxy: Path | None = None) -> dict[str, Path]:
    """The two development corpora the policies' constants were chosen on: cosqa-dev
    and docproxy (``docproxy``, or built now into a temporary directory)."""
    if docproxy is None:
        import tempfile

        from riido_pg.corpora.docproxy import build_docproxy

        docproxy = Path(tempfile.mkdtemp()) / "docproxy"
        build_docproxy(docproxy)
    return {"cosqa-dev": COSQA_DIR, "docproxy": docproxy}


VERBS = """
get set read write load save parse format build create make init open close start stop
run execute call invoke send receive fetch store update delete remove insert append add
find search lookup match filter sort merge split join map reduce convert encode decode
compress decompress encrypt decrypt hash sign verify validate check test compare copy
move rename resolve register unregister subscribe publish notify handle process render
draw paint show hide enable disable toggle reset clear flush sync commit rollback lock
unlock acquire release wait sleep retry schedule cancel abort connect disconnect bind
listen accept serialize deserialize marshal unmarshal normalize escape unescape quote
strip trim pad wrap unwrap split tokenize compile evaluate emit log trace debug warn
measure count sum scale resize crop rotate transform apply dispatch route redirect
download upload extract install configure migrate backup restore clone iterate collect
""".split()

NOUNS = """
config file path dir name value key item list array map dict table row column cell
record entry node tree graph edge vertex user account session token password secret
request response header body cookie url uri query param argument option flag setting
buffer stream socket connection client server host port address packet message event
queue stack cache pool thread process task job worker handler callback listener hook
plugin module package class method function field attribute property type schema model
view template widget window frame image pixel color font text string char byte line
word number integer float index offset length size count total limit timeout interval
date time timestamp duration zone locale language encoding charset format pattern regex
error exception status code result output input source target payload data document
database transaction cursor statement column_family partition shard replica snapshot
version revision branch commit tag release build artifact dependency container volume
network route endpoint service resource permission role group policy rule filter
matrix vector tensor point shape layer batch epoch gradient weight loss metric score
report summary chart plot axis label legend title page link menu button dialog form
field_name state context env environment variable constant parameter signature digest
certificate key_pair hash checksum archive zip tar gzip json xml yaml csv html css sql
""".split()

ADJECTIVES = """
new old default current next previous first last empty full valid invalid active
inactive local remote global public private internal external raw parsed encoded
decoded temporary persistent async sync max min total partial dirty clean pending
cached stale unique primary secondary base parent child root leaf left right upper
lower short long fast slow safe unsafe
""".split()

ACRONYMS = "HTTP URL JSON XML ID IO API SQL TCP UDP UTF8 CSV HTML DB OS UI".split()

PY_KEYWORDS = (
    "if",
    "elif",
    "else",
    "for",
    "while",
    "return",
    "raise",
    "try",
    "except",
    "with",
    "yield",
    "lambda",
    "not",
    "and",
    "or",
    "in",
    "is",
    "None",
    "True",
    "False",
    "self",
    "assert",
    "break",
    "continue",
    "pass",
)

ERRORS = (
    "ValueError",
    "KeyError",
    "TypeError",
    "RuntimeError",
    "IOError",
    "OSError",
    "IndexError",
    "NotImplementedError",
    "TimeoutError",
    "PermissionError",
)

DOC_TEMPLATES = (
    "{Verb} the {adj} {noun} of the {noun2}.",
    "{Verb} a {noun} from the given {noun2} and return the {noun3}.",
    "Return the {noun} for this {noun2}, or None if it is {adj}.",
    "{Verb} {noun} {noun2} using the {adj} {noun3}.",
    "Helper to {verb} the {noun} {noun2} before we {verb2} it.",
    "{Verb} all {noun}s in the {noun2} that match the {noun3}.",
    "Internal: {verb} the {noun} and update the {adj} {noun2} {noun3}.",
    "Convert a {noun} to a {adj} {noun2} {noun3}.",
)

QUERY_TEMPLATES = (
    "how to {verb} {noun} {noun2} in python",
    "{verb} {adj} {noun} from {noun2}",
    "python {verb} {noun} to {noun2}",
    "how do i {verb} a {noun} {noun2}",
    "{verb} {noun} {noun2} {noun3}",
    "get {adj} {noun} of {noun2} python",
    "{verb} {noun} with {noun2} and {noun3}",
    "check if {noun} is {adj}",
    "{verb} {noun} {noun2} without {noun3}",
    "best way to {verb} {noun} in {noun2}",
)


def _words(name: str) -> list[str]:
    return name.split("_")


class _Vocab:
    """~4,000 identifiers with Zipf weights, built once per seed."""

    def __init__(self, seed: int, size: int = 4000) -> None:
        rng = random.Random(f"riido-bench-vocab:{seed}")
        idents: list[str] = []
        seen: set[str] = set()
        verbs, nouns, adjs = VERBS, NOUNS, ADJECTIVES
        while len(idents) < size:
            shape = rng.random()
            parts: list[str]
            if shape < 0.45:
                parts = [rng.choice(verbs), *_words(rng.choice(nouns))]
            elif shape < 0.65:
                parts = [rng.choice(adjs), *_words(rng.choice(nouns))]
            elif shape < 0.80:
                parts = [rng.choice(verbs), rng.choice(adjs), *_words(rng.choice(nouns))]
            elif shape < 0.90:
                parts = _words(rng.choice(nouns)) + _words(rng.choice(nouns))
            else:
                parts = [rng.choice(verbs), rng.choice(ACRONYMS), *_words(rng.choice(nouns))]
            style = rng.random()
            if style < 0.40:
                ident = parts[0].lower() + "".join(_cap(p) for p in parts[1:])  # camelCase
            elif style < 0.75:
                ident = "_".join(p.lower() for p in parts)  # snake_case
            elif style < 0.92:
                ident = "".join(_cap(p) for p in parts)  # PascalCase
            else:
                ident = "_".join(p.upper() for p in parts)  # UPPER_SNAKE
            if ident not in seen:
                seen.add(ident)
                idents.append(ident)
        self.idents = idents
        weights = [1.0 / (r + 1) ** 1.1 for r in range(len(idents))]
        self.cum = list(itertools.accumulate(weights))
        self.total = self.cum[-1]
        # simple words (local variables, params): Zipf over nouns and short names
        self.locals = [
            *(
                "x",
                "i",
                "n",
                "s",
                "k",
                "v",
                "ok",
                "err",
                "buf",
                "res",
                "tmp",
                "idx",
                "ctx",
                "cfg",
                "obj",
                "val",
                "out",
                "data",
                "item",
                "line",
            ),
            *(n for n in NOUNS if "_" not in n),
        ]
        lw = [1.0 / (r + 1) ** 0.9 for r in range(len(self.locals))]
        self.lcum = list(itertools.accumulate(lw))

    def ident(self, rng: random.Random) -> str:
        return self.idents[bisect.bisect(self.cum, rng.random() * self.total)]

    def local(self, rng: random.Random) -> str:
        return self.locals[bisect.bisect(self.lcum, rng.random() * self.lcum[-1])]


def _cap(word: str) -> str:
    return word.upper() if word in ACRONYMS else word[:1].upper() + word[1:]


_VOCABS: dict[int, _Vocab] = {}


def _vocab(seed: int) -> _Vocab:
    if seed not in _VOCABS:
        _VOCABS[seed] = _Vocab(seed)
    return _VOCABS[seed]


def _sentence(rng: random.Random, template: str) -> str:
    verb, verb2 = rng.choice(VERBS), rng.choice(VERBS)
    nouns = [rng.choice(NOUNS).replace("_", " ") for _ in range(3)]
    return template.format(
        verb=verb,
        Verb=verb.capitalize(),
        verb2=verb2,
        adj=rng.choice(ADJECTIVES),
        noun=nouns[0],
        noun2=nouns[1],
        noun3=nouns[2],
    )


def _snake(ident: str) -> str:
    out = []
    for i, ch in enumerate(ident):
        if ch.isupper() and i and not ident[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _camel(ident: str) -> str:
    parts = [p for p in _snake(ident).split("_") if p]
    return parts[0] + "".join(_cap(p) for p in parts[1:])


def _expr(rng: random.Random, v: _Vocab, lang: str) -> str:
    r = rng.random()
    a, b = v.local(rng), v.ident(rng)
    if lang == "py":
        b = _snake(b) if rng.random() < 0.6 else b
    else:
        b = _camel(b)
    if r < 0.35:
        return f"{b}({a})"
    if r < 0.55:
        return f"{a}.{b}({v.local(rng)}, {v.local(rng)})"
    if r < 0.70:
        return f"{a}[{rng.choice(('0', '-1', 'i', repr(v.local(rng))))}]"
    if r < 0.82:
        return f"{a} + {rng.randint(1, 4096)}"
    if r < 0.92:
        return f'"{rng.choice(VERBS)} {rng.choice(NOUNS)}: %s"'
    return f"{a}.{b}"


def _py_function(rng: random.Random, v: _Vocab, target: int) -> str:
    name = _snake(v.ident(rng))
    params = ["self"] if rng.random() < 0.5 else []
    params += [v.local(rng) for _ in range(rng.randint(0, 3))]
    params = list(dict.fromkeys(params))
    if rng.random() < 0.4:
        params.append(f"{v.local(rng)}_{rng.choice(('timeout', 'limit', 'default'))}=None")
    doc = _sentence(rng, rng.choice(DOC_TEMPLATES))
    lines = [f"def {name}({', '.join(params)}):", f'    """{doc}']
    if rng.random() < 0.5 and params:
        lines.append("")
        lines.append("    Args:")
        for p in params[:3]:
            if p != "self":
                lines.append(
                    f"        {p.split('=')[0]}: the {rng.choice(ADJECTIVES)} "
                    f"{rng.choice(NOUNS).replace('_', ' ')}."
                )
    lines.append('    """')
    depth = 1
    while sum(len(x) + 1 for x in lines) < target:
        ind = "    " * depth
        r = rng.random()
        if r < 0.35:
            lines.append(f"{ind}{v.local(rng)} = {_expr(rng, v, 'py')}")
        elif r < 0.50 and depth < 3:
            lines.append(
                f"{ind}if {v.local(rng)} {rng.choice(('is None', '== 0', '', 'in ' + v.local(rng)))}:".replace(
                    " :", ":"
                )
            )
            depth += 1
        elif r < 0.60 and depth < 3:
            lines.append(f"{ind}for {v.local(rng)} in {_expr(rng, v, 'py')}:")
            depth += 1
        elif r < 0.66:
            lines.append(f"{ind}raise {rng.choice(ERRORS)}({_expr(rng, v, 'py')})")
            depth = max(1, depth - 1)
        elif r < 0.72:
            lines.append(f"{ind}# {_sentence(rng, rng.choice(DOC_TEMPLATES)).lower()}")
        elif r < 0.80 and depth > 1:
            lines.append(f"{ind}return {_expr(rng, v, 'py')}")
            depth -= 1
        else:
            lines.append(f"{ind}self.{_snake(v.ident(rng))}({_expr(rng, v, 'py')})")
    lines.append(f"    return {_expr(rng, v, 'py')}")
    return "\n".join(lines)


def _c_like_function(rng: random.Random, v: _Vocab, target: int, lang: str) -> str:
    name = _camel(v.ident(rng))
    if lang == "go":
        name = name[:1].upper() + name[1:] if rng.random() < 0.5 else name
        recv = f"({v.local(rng)[:1]} *{_cap(_camel(v.ident(rng)))}) " if rng.random() < 0.5 else ""
        params = ", ".join(
            f"{v.local(rng)} {rng.choice(('string', 'int', '[]byte', 'error', 'bool', '*Config'))}"
            for _ in range(rng.randint(0, 3))
        )
        head = f"func {recv}{name}({params}) ({rng.choice(('string', 'int', '*' + _cap(_camel(v.ident(rng)))))}, error) {{"
        doc = f"// {name} {_sentence(rng, rng.choice(DOC_TEMPLATES)).lower()}"
        decl, ret = ":=", "return {e}, nil"
    elif lang == "js":
        params = ", ".join(v.local(rng) for _ in range(rng.randint(0, 3)))
        head = (
            f"{rng.choice(('async function', 'function', 'export function'))} {name}({params}) {{"
        )
        doc = f"/**\n * {_sentence(rng, rng.choice(DOC_TEMPLATES))}\n */"
        decl, ret = "=", "return {e};"
    else:  # java
        params = ", ".join(
            f"{rng.choice(('String', 'int', 'long', 'List<String>', 'Map<String, Object>'))} {v.local(rng)}"
            for _ in range(rng.randint(0, 3))
        )
        head = (
            f"{rng.choice(('public', 'private', 'protected'))} {rng.choice(('static ', ''))}"
            f"{rng.choice(('String', 'void', 'boolean', 'int', _cap(_camel(v.ident(rng)))))} {name}({params}) {{"
        )
        doc = f"/** {_sentence(rng, rng.choice(DOC_TEMPLATES))} */"
        decl, ret = "=", "return {e};"
    lines = [doc, head]
    depth = 1
    while sum(len(x) + 1 for x in lines) < target:
        ind = "\t" * depth
        r = rng.random()
        semi = "" if lang == "go" else ";"
        if r < 0.40:
            kw = "" if lang == "go" else ("const " if lang == "js" else "var ")
            lines.append(f"{ind}{kw}{v.local(rng)} {decl} {_expr(rng, v, lang)}{semi}")
        elif r < 0.55 and depth < 3:
            cond = f"{v.local(rng)} != nil" if lang == "go" else f"{v.local(rng)} == null"
            lines.append(f"{ind}if {cond} {{" if lang == "go" else f"{ind}if ({cond}) {{")
            depth += 1
        elif r < 0.63 and depth < 3:
            loop = (
                f"for _, {v.local(rng)} := range {v.local(rng)} {{"
                if lang == "go"
                else f"for (const {v.local(rng)} of {v.local(rng)}) {{"
                if lang == "js"
                else f"for (String {v.local(rng)} : {v.local(rng)}) {{"
            )
            lines.append(ind + loop)
            depth += 1
        elif r < 0.72 and depth > 1:
            lines.append(f"{ind}{ret.format(e=_expr(rng, v, lang))}")
            depth -= 1
            lines.append("\t" * depth + "}")
        elif r < 0.78:
            lines.append(f"{ind}// {_sentence(rng, rng.choice(DOC_TEMPLATES)).lower()}")
        else:
            lines.append(f"{ind}{v.local(rng)}.{_camel(v.ident(rng))}({_expr(rng, v, lang)}){semi}")
    while depth > 1:
        depth -= 1
        lines.append("\t" * depth + "}")
    lines.append(f"\t{ret.format(e=_expr(rng, v, lang))}")
    lines.append("}")
    return "\n".join(lines)


def synthetic_text(i: int, seed: int = 0) -> str:
    """Document ``i`` of the synthetic corpus (300-1,000 bytes)."""
    v = _vocab(seed)
    rng = random.Random(seed * 1_000_003 + i)
    target = rng.randint(260, 900)
    r = rng.random()
    if r < 0.55:
        text = _py_function(rng, v, target)
    else:
        text = _c_like_function(rng, v, target, "go" if r < 0.72 else "js" if r < 0.86 else "java")
    if len(text) > 1000:  # cut at a line boundary
        text = text[: text.rfind("\n", 0, 1000)]
    return text


def synthetic_documents(count: int, seed: int = 0) -> list[Document]:
    return [Document(f"doc{i:07d}", synthetic_text(i, seed)) for i in range(count)]


def synthetic_queries(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(f"riido-bench-queries:{seed}")
    return [_sentence(rng, rng.choice(QUERY_TEMPLATES)) for _ in range(count)]


def tiny_documents(count: int, seed: int = 0) -> Iterator[Document]:
    """``count`` documents of about 20 bytes (``readConfig(x) + 42``-like)."""
    v = _vocab(seed)
    rng = random.Random(f"riido-bench-tiny:{seed}")
    for i in range(count):
        ident = v.ident(rng)[:12]
        text = f"{ident}({v.local(rng)[:3]}) {i % 997}"
        yield Document(f"t{i:07d}", text[:24])


def cosqa_available() -> bool:
    return (COSQA_DIR / "corpus.jsonl").is_file()


def _cosqa_base() -> list[Document]:
    docs = []
    with (COSQA_DIR / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            text = obj["text"]
            if obj.get("title"):
                text = f"{obj['title']}\n{text}"
            docs.append(Document(obj["_id"], text))
    return docs


def cosqa_documents(count: int) -> list[Document]:
    """``count`` CoSQA functions: the 6,267 originals, then copies ``<id>~1``, ``<id>~2``..."""
    base = _cosqa_base()
    out: list[Document] = []
    for k in itertools.count():
        for d in base:
            if len(out) >= count:
                return out
            out.append(d if k == 0 else Document(f"{d.id}~{k}", d.text))
    return out


def cosqa_distinct_documents(count: int) -> list[Document]:
    """Like :func:`cosqa_documents`, but copy ``k`` of each function gets one more line
    (a comment naming ``k`` with two vocabulary words), so no two documents share a
    text: a load cannot index each distinct text once and reuse it for the copies,
    which :func:`cosqa_documents`' verbatim copies let it do. ~20 more bytes a copy,
    a few hundred more lexemes in the whole corpus."""
    return list(iter_cosqa_distinct(count))


def iter_cosqa_distinct(count: int) -> Iterator[Document]:
    """:func:`cosqa_distinct_documents` one at a time (nothing held but the 6,267)."""
    base = _cosqa_base()
    words = VERBS + NOUNS
    n = 0
    for k in itertools.count():
        for d in base:
            if n >= count:
                return
            n += 1
            if k == 0:
                yield d
            else:
                a, b = words[k % len(words)], words[(k // len(words)) % len(words)]
                yield Document(f"{d.id}~{k}", f"{d.text}\n# copy {b} {a}")


def cosqa_queries(count: int | None = None) -> list[str]:
    qs = []
    with (COSQA_DIR / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            qs.append(json.loads(line)["text"])
    return qs if count is None else qs[:count]


def documents(kind: str, count: int, seed: int = 0) -> list[Document]:
    """``kind``: "synthetic", "cosqa" (verbatim copies) or "cosqa-distinct" (every text
    distinct); the CoSQA ones fall back to synthetic when the data is absent."""
    if kind == "cosqa" and cosqa_available():
        return cosqa_documents(count)
    if kind == "cosqa-distinct" and cosqa_available():
        return cosqa_distinct_documents(count)
    if kind not in ("synthetic", "cosqa", "cosqa-distinct"):
        raise ValueError(f"unknown corpus {kind!r}")
    return synthetic_documents(count, seed)


def queries(kind: str, count: int, seed: int = 0) -> list[str]:
    if kind == "cosqa" and cosqa_available():
        qs = cosqa_queries()
        return [qs[i % len(qs)] for i in range(count)]
    return synthetic_queries(count, seed)


def write_jsonl(docs: list[Document], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps({"id": d.id, "text": d.text}, ensure_ascii=False) + "\n")
    return path


def _main() -> None:
    import argparse
    import statistics
    import time

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--kind", choices=("synthetic", "cosqa"), default="synthetic")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--show", action="store_true", help="print the documents")
    p.add_argument("--jsonl", type=Path, help="write {id,text} lines here")
    args = p.parse_args()
    t = time.perf_counter()
    docs = documents(args.kind, args.count, args.seed)
    elapsed = time.perf_counter() - t
    sizes = [len(d.text.encode()) for d in docs]
    print(
        f"{len(docs)} {args.kind} documents in {elapsed:.2f} s; bytes min {min(sizes)} "
        f"median {statistics.median(sizes):.0f} max {max(sizes)}"
    )
    if args.show:
        for d in docs:
            print(f"--- {d.id}\n{d.text}")
    if args.jsonl:
        write_jsonl(docs, args.jsonl)
        print(f"wrote {args.jsonl}")


if __name__ == "__main__":
    _main()
