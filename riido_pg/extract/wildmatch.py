"""gitignore patterns matched as git matches them, in time linear in the path's length.

git's ``wildmatch`` backtracks: ``a/**/x*/**/x*/**/x*/zzz`` against a path 55
directories deep takes minutes, and so did the regular expressions a library built
from such a pattern. Here a pattern is compiled once into a list of steps (a byte, a
set of bytes, a run of ``*``, an optional ``**/``) and matched either by a regular
expression, when it holds at most one ``*`` run (a single unbounded repetition cannot
backtrack more than once per byte), or by a bit-parallel simulation of the steps'
automaton: every byte of the path moves the set of steps reached at once, so the time
is the path's length times the pattern's, whatever the pattern.

The semantics are git's (2.39, ``dir.c`` and ``wildmatch.c``), byte for byte on the
UTF-8 path, including its quirks:

* ``!`` negates; a trailing ``/`` matches directories only; a pattern without a ``/``
  (but the trailing one) is matched against the last segment of the path, any other
  against the whole path relative to the ignore file's directory (one leading ``/``
  dropped);
* ``?``, a class (``[a-z]``, ``[!x]``, ``[^x]``, ``[[:alpha:]]``) and ``*`` never match
  ``/``; ``**`` between slashes, or at either end, matches across them (``a/**/b``
  matches ``a/b``); any other ``**`` is one ``*``. As in git, the literal head of a path
  pattern (up to its first ``*``, ``?``, ``[`` or ``\\``) is compared first and the rest
  matched as a pattern of its own, so ``ab**/c`` matches ``abx/y/c``;
* ``\\`` escapes the next character; trailing spaces are dropped unless escaped.

A line that can never match in git (``!`` alone, a dangling ``\\``, an unclosed class
or an unknown ``[:name:]``) is refused as invalid instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["InvalidPattern", "Pattern", "compile_pattern", "trim_trailing_spaces"]

_SLASH = ord("/")
_ALL = frozenset(range(256))
_NOT_SLASH = _ALL - {_SLASH}
_GLOB_SPECIAL = frozenset(b"*?[\\")


def _bytes(test: str) -> frozenset[int]:
    return frozenset(b for b in range(128) if re.fullmatch(test, chr(b)))


# git's own character classes (``sane_ctype``: ASCII only, space is " \t\n\r").
_CLASSES: dict[bytes, frozenset[int]] = {
    b"alnum": _bytes(r"[A-Za-z0-9]"),
    b"alpha": _bytes(r"[A-Za-z]"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset(range(32)) | {127},
    b"digit": _bytes(r"[0-9]"),
    b"graph": frozenset(range(33, 127)),
    b"lower": _bytes(r"[a-z]"),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    b"space": frozenset(b" \t\n\r"),
    b"upper": _bytes(r"[A-Z]"),
    b"xdigit": _bytes(r"[0-9A-Fa-f]"),
}


class InvalidPattern(ValueError):
    """A pattern git could never match (dropped and reported by the caller)."""


# Steps: a set of bytes consumes one byte; STAR repeats over the bytes it holds and
# may be skipped; DIRS is git's ``**/``: nothing, or any bytes then a ``/``.
@dataclass(frozen=True, slots=True)
class _One:
    accepts: frozenset[int]


@dataclass(frozen=True, slots=True)
class _Star:
    accepts: frozenset[int]


class _Dirs:
    pass


_Step = _One | _Star | _Dirs


def _class(p: bytes, i: int) -> tuple[frozenset[int], int]:
    """The bytes the class opening at ``p[i]`` (``[``) matches (``/`` never), and where
    it ends; git's parsing, step for step."""
    n = len(p)

    def at(k: int) -> int:
        return p[k] if k < n else 0

    i += 1
    c = at(i)
    if c == ord("^"):
        c = ord("!")
    negated = c == ord("!")
    if negated:
        i += 1
        c = at(i)
    prev = 0
    members: set[int] = set()
    while True:
        if not c:
            raise InvalidPattern("unclosed character class")
        if c == ord("\\"):
            i += 1
            c = at(i)
            if not c:
                raise InvalidPattern("unclosed character class")
            members.add(c)
        elif c == ord("-") and prev and at(i + 1) and at(i + 1) != ord("]"):
            i += 1
            c = at(i)
            if c == ord("\\"):
                i += 1
                c = at(i)
                if not c:
                    raise InvalidPattern("unclosed character class")
            members.update(range(prev, c + 1))
            c = 0
        elif c == ord("[") and at(i + 1) == ord(":"):
            start = i + 2
            end = start
            while at(end) and at(end) != ord("]"):
                end += 1
            if not at(end):
                raise InvalidPattern("unclosed character class")
            if end - start - 1 < 0 or p[end - 1] != ord(":"):
                i, c = start - 2, ord("[")  # not a [:name:]: a "[" in the set
                members.add(c)
            else:
                name = p[start : end - 1]
                if name not in _CLASSES:
                    raise InvalidPattern(f"unknown class [:{name.decode(errors='replace')}:]")
                members |= _CLASSES[name]
                i, c = end, 0
        else:
            members.add(c)
        prev = c
        i += 1
        c = at(i)
        if c == ord("]"):
            break
    accepts = (_ALL - members) if negated else frozenset(members)
    return accepts - {_SLASH}, i + 1


def _steps(p: bytes) -> list[_Step]:
    """``p`` (one wildmatch pattern, with git's ``WM_PATHNAME``) as steps."""
    steps: list[_Step] = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c == ord("\\"):
            if i + 1 >= n:
                raise InvalidPattern("dangling backslash")
            steps.append(_One(frozenset({p[i + 1]})))
            i += 2
        elif c == ord("?"):
            steps.append(_One(_NOT_SLASH))
            i += 1
        elif c == ord("["):
            accepts, i = _class(p, i)
            steps.append(_One(accepts))
        elif c == ord("*"):
            j = i + 1
            if j < n and p[j] == ord("*"):
                while j < n and p[j] == ord("*"):
                    j += 1
                after_slash = i == 0 or p[i - 1] == _SLASH
                before_slash = j == n or p[j] == _SLASH or p[j : j + 2] == b"\\/"
                if after_slash and before_slash:
                    if j < n and p[j] == _SLASH:
                        steps.append(_Dirs())
                        j += 1
                    else:
                        steps.append(_Star(_ALL))
                    i = j
                    continue
            steps.append(_Star(_NOT_SLASH))
            i = j
        else:
            steps.append(_One(frozenset({c})))
            i += 1
    return steps


def _set(accepts: frozenset[int]) -> bytes:
    if accepts == _ALL:
        return b"[\\x00-\\xff]"
    if len(accepts) == 1:
        return re.escape(bytes(accepts))
    return b"[" + b"".join(b"\\x%02x" % b for b in sorted(accepts)) + b"]" if accepts else b"(?!)"


def _regex(steps: list[_Step]) -> re.Pattern[bytes]:
    parts = []
    for step in steps:
        if isinstance(step, _One):
            parts.append(_set(step.accepts))
        elif isinstance(step, _Star):
            parts.append(_set(step.accepts) + b"*")
        else:
            parts.append(b"(?:[\\x00-\\xff]*/)?")
    return re.compile(b"".join(parts))


class _Automaton:
    """The steps as a bit-parallel automaton: bit ``k`` set means "step ``k`` is
    next"; a ``**/`` is a repetition of any byte then a ``/``, which may be skipped."""

    def __init__(self, steps: list[_Step]) -> None:
        self.advance = [0] * 256  # steps a byte consumes and moves past
        self.stay = [0] * 256  # repetitions a byte consumes and stays in
        self.skip1 = 0  # repetitions, which may match nothing
        self.skip2 = 0  # ``**/`` starts, which may be skipped with their ``/``
        k = 0
        for step in steps:
            if isinstance(step, _One):
                for b in step.accepts:
                    self.advance[b] |= 1 << k
            elif isinstance(step, _Star):
                for b in step.accepts:
                    self.stay[b] |= 1 << k
                self.skip1 |= 1 << k
            else:
                for b in range(256):
                    self.stay[b] |= 1 << k
                self.advance[_SLASH] |= 1 << (k + 1)
                self.skip1 |= 1 << k
                self.skip2 |= 1 << k
                k += 1
            k += 1
        self.final = 1 << k

    def _closure(self, s: int) -> int:
        while True:
            wider = s | ((s & self.skip1) << 1) | ((s & self.skip2) << 2)
            if wider == s:
                return s
            s = wider

    def fullmatch(self, text: bytes) -> bool:
        s = self._closure(1)
        for b in text:
            s = self._closure(((s & self.advance[b]) << 1) | (s & self.stay[b]))
            if not s:
                return False
        return bool(s & self.final)


def trim_trailing_spaces(line: str) -> str:
    """The line without its trailing spaces, but escaped ones (git's rule: spaces only,
    not tabs)."""
    last_space = None
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            if last_space is None:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


@dataclass(frozen=True, slots=True)
class Pattern:
    """One gitignore pattern, compiled."""

    negative: bool
    dir_only: bool
    #: Matched against the last segment only (the pattern has no ``/``).
    basename: bool
    #: A path pattern's literal head, compared as it is before the rest is matched.
    head: bytes
    matcher: re.Pattern[bytes] | _Automaton

    def test(self, target: bytes) -> bool:
        """Whether the pattern matches ``target``: the last segment of the path for a
        basename pattern, else the path relative to the ignore file's directory (UTF-8,
        no trailing ``/``); directories only or not is the caller's to check."""
        if self.head:
            if not target.startswith(self.head):
                return False
            target = target[len(self.head) :]
        if isinstance(self.matcher, _Automaton):
            return self.matcher.fullmatch(target)
        return self.matcher.fullmatch(target) is not None

    def tester(self) -> Callable[[bytes], object]:
        """``test``, or the same answer (truthy or not) faster when there is no head."""
        return self.test if self.head else self.matcher.fullmatch

    def matches(self, path: bytes, is_dir: bool) -> bool:
        """Whether the pattern matches ``path`` (relative to the ignore file's
        directory, UTF-8, no trailing ``/``), a directory or not."""
        if self.dir_only and not is_dir:
            return False
        return self.test(path[path.rfind(b"/") + 1 :] if self.basename else path)


def compile_pattern(line: str) -> Pattern | None:
    """An ignore-file line (trailing spaces already trimmed) as a pattern; None for a
    comment or a blank line; InvalidPattern for one git could never match."""
    if not line or line.startswith("#"):
        return None
    raw = line.encode("utf-8", "surrogateescape")
    negative = raw.startswith(b"!")
    if negative:
        raw = raw[1:]
        if not raw:
            raise InvalidPattern("nothing to negate")
    dir_only = raw.endswith(b"/")
    if dir_only:
        raw = raw[:-1]
    basename = b"/" not in raw
    head = b""
    if not basename:
        literal = next((i for i, c in enumerate(raw) if c in _GLOB_SPECIAL), len(raw))
        head, raw = raw[:literal], raw[literal:]
        if head.startswith(b"/"):
            head = head[1:]
    steps = _steps(raw)
    repeats = sum(not isinstance(step, _One) for step in steps)
    matcher = _regex(steps) if repeats <= 1 else _Automaton(steps)
    return Pattern(negative, dir_only, basename, head, matcher)
