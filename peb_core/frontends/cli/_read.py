"""`peb read`: what a reply decides, read as scoring reads it (docs/benchmark.md §2, §2.1): a
reply holding a response's JSON object by the reply reader, a reply in prose by the prose reader,
printed as one JSON object `{"answer", "completeness", "gaps"}`; with `--marks`, the words the
prose reader read; with `--prose-reader MODEL`, a model's reading beside it and where the two
differ."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from ...reading import differences
from ...scoring import reply_decision
from ...systems import ProseReaderError, model_read_prose
from ...systems._model import model_problem
from ...tasks import Task
from .._argv import Parser, UsageError, path_arg
from ._common import families_arg, find_task


def _text(path: str) -> str:
    """The reply's text: the file's, or standard input's for `-`."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the reply ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: the reply is not UTF-8 text") from None


def cmd_read(args: argparse.Namespace) -> None:
    (spec,) = families_arg([args.family])
    task: Task | None = None
    if args.task is not None:
        task, _ = find_task(args.task, [args.family])
    if args.prose_reader is not None:
        problem = model_problem(args.prose_reader)
        if problem is not None:
            raise UsageError(f"--prose-reader: {problem}")
    text = _text(args.file)
    out, reading = reply_decision(text, spec, task=task)
    if args.marks:
        out["marks"] = [
            {
                "start": m.start,
                "end": m.end,
                "kind": m.kind,
                "label": m.label,
                "note": m.note,
                "text": text[m.start : m.end],
            }
            for m in (reading.marks if reading is not None else ())
        ]
    if args.prose_reader is not None:
        try:
            model = asyncio.run(
                model_read_prose(text, spec, args.prose_reader, api_base=args.api_base)
            )
        except ProseReaderError as exc:
            raise UsageError(str(exc)) from None
        out["model"] = {**model.to_json(), "affected": list(model.affected)}
        out["disagreements"] = {
            surface: {"reader": ours, "model": theirs}
            for surface, (ours, theirs) in differences(out, model).items()
        }
    print(json.dumps(out, indent=2))


def add_commands(sub: argparse._SubParsersAction[Parser]) -> None:
    """`read`."""
    p = sub.add_parser(
        "read",
        help="what a reply (JSON or prose) decides: its answer, completeness claim and gaps",
    )
    p.add_argument("file", type=path_arg("file"), help="the reply: a text file, or - for stdin")
    p.add_argument("--family", required=True, metavar="F", help="the family the reply is about")
    p.add_argument(
        "--task",
        metavar="ID",
        help="the task it answers (its contract resolves the names a message uses)",
    )
    p.add_argument("--marks", action="store_true", help="also the words read, as spans")
    p.add_argument(
        "--prose-reader",
        metavar="MODEL",
        help="also ask this litellm model what the reply decides, and show where it differs",
    )
    p.add_argument("--api-base", metavar="URL", help="where --prose-reader's model is served")
    p.set_defaults(func=cmd_read)
