"""Command lines derived from the one declaration of a run (`runs.RunSpec`): `peb run`, `peb mcp
serve`, the workbench's headless flags and the selection options of `peb tasks` add each run
option with `add_options` (its flag, help and default from the declaration; its value read by
`runs.option_value`, so a bad value is refused while parsing with the same line every front-end
gives) and read the options back with `given`. Also the one error path of every command line
(`UsageError`: one line, exit status 2) and the argument types of what is not a run option."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..runs import OptionError, default, flag, option_value, options, valid


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def one_line(text: str) -> str:
    """`text` with each character that is not printable (a newline, a NUL, ...) written as a
    string's repr writes it (`\\n`, `\\x00`): a message that names what was given stays one
    line and shows it."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _typed(name: str) -> Callable[[str], Any]:
    """An argparse type reading option `name` as every front-end reads it."""

    def parse(text: str) -> Any:
        try:
            value = option_value(name, text)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(exc.problem) from None
        if value is None:  # blank text: not a value
            raise argparse.ArgumentTypeError(f"expected {valid(name)}, got {text!r}")
        return value

    return parse


def _help(name: str, frontend: str, shown_default: str | None) -> str:
    """An option's `--help` line: its help and its default (once: a help that says its own
    default gets only the choices added)."""
    option = options()[name]
    value = default(name, frontend)
    if shown_default is None and "default" in option.help:
        choices = option.choices() if option.choices is not None else ()
        return f"{option.help} (one of {', '.join(choices)})" if choices else option.help
    if shown_default is None:
        shown_default = "none" if value is None else str(value)
        if option.choices is not None:
            shown_default = f"{value}; one of {', '.join(option.choices())}"
    return f"{option.help} (default: {shown_default})"


def add_options(
    parser: argparse.ArgumentParser,
    frontend: str,
    names: Iterable[str] | None = None,
    *,
    defaults: dict[str, str] | None = None,
) -> None:
    """Add each run option `frontend` offers (or only `names`, in their declared order) to
    `parser` as `--<name>`: a switch on by default as `--no-<name>`; names (`--family`) may be
    repeated. Every value defaults to None (not given), so the declaration's default applies
    when the spec is made; `defaults` only changes what `--help` says of one."""
    offered = options(frontend)
    for name, option in options().items():
        if name not in (offered if names is None else set(names)):
            continue
        shown = (defaults or {}).get(name)
        if option.kind == "switch":
            on = default(name, frontend)
            what = option.off_help or f"off: {option.help}"  # what the flag does
            parser.add_argument(
                f"--no-{name.replace('_', '-')}" if on else flag(name),
                dest=name,
                action="store_const",
                const=not on,
                default=None,
                help=f"{what} (default: {option.label.lower()} on)"
                if on
                else f"{option.help} (off unless given)",
            )
        elif option.kind == "names":
            parser.add_argument(
                flag(name),
                action="append",
                metavar=name[0].upper(),
                help=_help(name, frontend, shown),
            )
        else:
            parser.add_argument(
                flag(name),
                type=_typed(name),
                default=None,
                metavar=_metavar(option.kind),
                help=_help(name, frontend, shown),
            )


def _metavar(kind: str) -> str | None:
    return {"count": "N", "number": "X", "seeds": "LIST", "url": "URL"}.get(kind)


def given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The run options among `names` that `args` holds a value for."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def checked(
    kind: Callable[[str], Any], ok: Callable[[Any], bool], valid: str
) -> Callable[[str], Any]:
    """An argparse type for what is not a run option: `kind(text)` of ASCII text if that works
    and passes `ok`, else one line naming what is valid."""

    def parse(text: str) -> Any:
        try:
            value = kind(text) if text.isascii() else None
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"expected {valid}, got {text!r}")
        return value

    return parse


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_arg(kind: str) -> Callable[[str], str]:
    """An argparse type for a path: not empty, UTF-8, and not an existing file where a `folder`
    is wanted, nor a folder where a `file` is."""

    def parse(text: str) -> str:
        path = Path(text)
        if not text:
            problem = "expected a path, got ''"
        elif not _utf8(text):
            problem = f"{text!r} is not UTF-8; choose a UTF-8 path"
        elif kind == "folder" and path.exists() and not path.is_dir():
            problem = f"{text} exists and is not a folder"
        elif kind == "file" and path.is_dir():
            problem = f"{text} is a folder; expected a file path"
        else:
            return text
        raise argparse.ArgumentTypeError(problem)

    return parse


COUNT = checked(int, lambda n: 1 <= n <= 1_000_000_000, "an integer from 1 to 1,000,000,000")
PORT = checked(int, lambda n: 1 <= n <= 65535, "a port from 1 to 65535")
