"""The shape of every command: shared options declared once, help in one style.

* :class:`Command` gives each command the shared options -- ``--dsn URL`` (on the
  commands that talk to a server) and ``--debug`` -- declared here once, so they are
  accepted after the subcommand as well as before it (on the app, ``main.py``); both
  land in the run's :class:`~riido_pg.cli.settings.Settings`.
* Help and usage name every value by one placeholder style (``SNAPSHOT``, ``FILE``,
  ``N``): no type labels (``<str>``, ``<int range>``), no ranges (``[x>=1]``), no
  braces around required arguments.
* :class:`Group` suggests the closest real command for a mistyped one, or none.
* Every parameter's value is coerced as typer coerces it, without the pydantic
  validator typer 0.2x builds for it where the value is a plain one (:func:`_direct`):
  importing pydantic was a fifth of every command's start-up.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["SYNONYMS", "Command", "DebugOption", "DsnOption", "Group", "LocalCommand"]

DsnOption = Annotated[
    str | None,
    typer.Option(
        "--dsn",
        metavar="URL",
        help="PostgreSQL URL (env RIIDO_PG_DSN); default: the embedded server.",
        show_default=False,
    ),
]
DebugOption = Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")]


#: What :func:`_direct` returns when it leaves a value to typer's own coercion.
_TYPER = object()


def _direct(param: Any, value: Any) -> Any:
    """``value`` coerced as typer's own coercion would (typer 0.2x builds a pydantic
    ``TypeAdapter`` per parameter for it, and importing pydantic is a fifth of a
    command's start-up), for the values the command line mostly gets: none given, a
    string for a ``str``, a path for a plain ``Path``, anything for a ``parser=``, and
    lists of those. :data:`_TYPER` for everything else, and on any doubt (an error, a
    path typer's checks could refuse), so typer coerces it, errors and all
    (``tests/test_cli_startup.py`` compares the two on every parameter)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or descriptor.file_annotation is not None:
        return _TYPER
    info, annotation = descriptor.parameter_info, descriptor.annotation
    if param.multiple or param.nargs != 1:
        if value is None:
            return ()
        if get_origin(annotation) is not list or not isinstance(value, (list, tuple)):
            return _TYPER
        (kind,) = get_args(annotation)
        items = [_one(info, kind, item) for item in value]
        return _TYPER if any(item is _TYPER for item in items) else items
    return None if value is None else _one(info, annotation, value)


def _one(info: Any, annotation: Any, value: Any) -> Any:
    """:func:`_direct` of one value (a list's item, or a single value) that is given."""
    if info.parser is not None:
        try:
            return info.parser(value)
        except Exception:  # typer calls it again, and reports its error its own way
            return _TYPER
    if not isinstance(value, str):
        return _TYPER
    if annotation is str:
        return value
    if annotation is Path and value and info.path_type is None and not info.allow_dash:
        return _path(info, value)
    return _TYPER


def _path(info: Any, value: str) -> Any:
    """A ``Path`` parameter's value with typer's checks (``exists``, ``file_okay``,
    ``dir_okay``, ``readable``, ``writable``, ``resolve_path``); :data:`_TYPER` where
    one fails, for typer to say so."""
    path = Path(value)
    if info.resolve_path:
        path = Path(os.path.realpath(path))
    try:
        found = os.stat(path)
    except OSError:
        return _TYPER if info.exists else path
    except Exception:  # a NUL in the path: typer's own error
        return _TYPER
    if (
        (not info.file_okay and stat.S_ISREG(found.st_mode))
        or (not info.dir_okay and stat.S_ISDIR(found.st_mode))
        or (info.readable and not os.access(path, os.R_OK))
        or (info.writable and not os.access(path, os.W_OK))
    ):
        return _TYPER
    return path


class _Direct:
    """A parameter's coercion (typer's ``RuntimeParam`` interface): :func:`_direct`,
    else typer's own, built on first need."""

    def __init__(self, param: Any) -> None:
        self._param = param
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        done = _direct(param, value)
        if done is not _TYPER:
            return done
        if self._typer is None:
            # typer's own get_runtime_param builds its coercion (and caches it where
            # this one is cached): called as typer defines it, not through a private
            # module whose name a later typer may change
            base = TyperArgument if isinstance(self._param, TyperArgument) else TyperOption
            self._param._runtime_param = None
            try:
                self._typer = base.get_runtime_param(self._param)
            finally:
                self._param._runtime_param = self
        return self._typer.coerce(value, param=param, ctx=ctx)


def _runtime_param(param: Any) -> Any:
    """Typer's coercion of ``param``'s value (its ``get_runtime_param``, typer 0.2x;
    earlier typers convert with click's types and never call it), without pydantic
    where :func:`_direct` does it."""
    if param._runtime_param is None:
        param._runtime_param = _Direct(param)
    return param._runtime_param


class _PlainArgument(TyperArgument):
    get_runtime_param = _runtime_param

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        return name if self.required else f"[{name}]"

    def _get_number_range_help_str(self) -> str | None:
        return None


class _PlainOption(TyperOption):
    get_runtime_param = _runtime_param

    def display_type_rich(self, ctx: Any) -> str | None:
        return self.metavar or "VALUE"

    def _get_number_range_help_str(self) -> str | None:
        return None


class _HelpOption(TyperOption):
    get_runtime_param = _runtime_param


def _help(option: Any) -> Any:
    """A command's ``--help`` option, coerced without pydantic as the others are."""
    if type(option) is TyperOption:
        option.__class__ = _HelpOption
    return option


def _plain(param: object) -> None:
    """Render ``param`` in the one placeholder style (its class; its values are
    coerced as typer's are, :func:`_direct`)."""
    if type(param) is TyperArgument:
        param.__class__ = _PlainArgument
    elif type(param) is TyperOption:
        param.__class__ = _PlainOption


def _store(ctx: Any, param: Any, value: Any) -> Any:
    from riido_pg.cli.settings import settings

    if param.name == "dsn":
        settings(ctx, dsn=value)
    elif param.name == "debug":
        settings(ctx, debug=bool(value))
    return value


def _shared(dsn: bool) -> list[Any]:
    """Fresh ``--dsn`` (if ``dsn``) and ``--debug`` parameters, stored in the run's
    Settings rather than passed to the command."""
    probe = typer.Typer(add_completion=False)

    @probe.command()
    def shared(dsn: DsnOption = None, debug: DebugOption = False) -> None:
        """Only its parameters are used."""

    params = [p for p in typer.main.get_command(probe).params if dsn or p.name != "dsn"]
    for p in params:
        p.expose_value = False
        p.callback = _store
    return params


class Command(TyperCommand):
    """A command that talks to a server: the shared ``--dsn`` and ``--debug``."""

    dsn = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(_shared(self.dsn))
        for p in self.params:
            _plain(p)

    def get_help_option(self, ctx: Any) -> Any:
        return _help(super().get_help_option(ctx))


class LocalCommand(Command):
    """A command that needs no server: the shared ``--debug`` only."""

    dsn = False


#: Words people try that are not commands, and the command that does it.
SYNONYMS = {
    "search": "query",
    "find": "query",
    "rank": "query",
    "index": "load",
    "import": "load",
    "add": "load",
    "store": "load",
    "list": "snapshots",
    "ls": "snapshots",
    "drop": "snapshots",
    "remove": "snapshots",
    "evaluate": "eval",
}


class Group(TyperGroup):
    """A group whose "no such command" names the closest real command, if any (a
    typo of a command, or of a word in :data:`SYNONYMS`), in the usual message style."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["suggest_commands"] = False
        super().__init__(*args, **kwargs)
        for p in self.params:
            _plain(p)

    def get_help_option(self, ctx: Any) -> Any:
        return _help(super().get_help_option(ctx))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:  # click's UsageError
            if args and args[0] not in self.commands and not args[0].startswith("-"):
                exc.message = f"no such command {args[0]!r}{self._suggestion(args[0])}"
            raise

    def _suggestion(self, typo: str) -> str:
        from difflib import get_close_matches  # only for a mistyped command

        words = {name: name for name in self.commands}
        words.update((w, c) for w, c in SYNONYMS.items() if c in self.commands)
        match = get_close_matches(typo.lower(), list(words), n=1, cutoff=0.75)
        return f"; did you mean {words[match[0]]!r}?" if match else ""
