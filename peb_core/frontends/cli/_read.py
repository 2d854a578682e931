"""`peb read`: what a reply decides, read as scoring reads it (docs/benchmark.md §2, §2.1): a
reply holding a response's JSON object by the reply reader, a reply in prose by the prose reader,
printed as one JSON object `{"answer", "completeness", "gaps"}`; with `--marks`, the words the
prose reader read; with `--prose-reader MODEL`, a model's reading beside it and where the two
differ. `--run RUN --prose-reader MODEL` reads every message of a run scoring reads as prose
both ways and prints their agreement per surface and each message where they differ."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ...reading import ProseReading, agreement, differences, read_prose
from ...results import run_messages
from ...runs import RunError
from ...scoring import reply_decision
from ...systems import ProseReaderError, model_read_prose
from ...systems._model import model_problem
from ...tasks import ScenarioFile, Task, load_families
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


async def _model_reading(text: str, spec: ScenarioFile, args: argparse.Namespace) -> ProseReading:
    """`--prose-reader`'s reading of `text`; one line (UsageError) if the model cannot give it."""
    try:
        return await model_read_prose(text, spec, args.prose_reader, api_base=args.api_base)
    except ProseReaderError as exc:
        raise UsageError(str(exc)) from None


def read_run(args: argparse.Namespace) -> dict[str, Any]:
    """Every message of `--run` that scoring reads as prose, read by the prose reader and by
    `--prose-reader`: how many, their agreement per surface, and each message where they
    differ (its task, repeat and place among the record's messages)."""
    try:
        said = run_messages(Path(args.run))
    except RunError as exc:
        raise UsageError(f"--run: {exc}") from None
    families = load_families()
    ours: list[ProseReading] = []
    theirs: list[ProseReading] = []
    differ: list[dict[str, Any]] = []
    place: dict[tuple[str, str, int], int] = {}
    for record, text in said:
        spec = families.get(record.family)
        if spec is None:
            raise UsageError(f"--run: family {record.family} of its records is not installed")
        key = (record.family, record.task_id, record.repeat)
        place[key] = place.get(key, 0) + 1
        mine = read_prose(text, spec)
        model = asyncio.run(_model_reading(text, spec, args))
        ours.append(mine)
        theirs.append(model)
        if found := differences(mine, model):
            differ.append(
                {
                    "family": record.family,
                    "task_id": record.task_id,
                    "repeat": record.repeat,
                    "message": place[key],
                    **{s: {"reader": a, "model": b} for s, (a, b) in found.items()},
                }
            )
    return {
        "run": str(args.run),
        "model": args.prose_reader,
        "messages": len(said),
        "agreement": {
            surface: {"same": a.same, "of": a.total, "rate": a.rate}
            for surface, a in agreement(ours, theirs).items()
        },
        "disagreements": differ,
    }


def cmd_read(args: argparse.Namespace) -> None:
    if args.prose_reader is not None:
        problem = model_problem(args.prose_reader)
        if problem is not None:
            raise UsageError(f"--prose-reader: {problem}")
    if args.run is not None:
        if args.file is not None or args.prose_reader is None:
            raise UsageError(
                "--run: give a run with --prose-reader MODEL and no reply file (a run's "
                "messages are read as scoring reads them; a file is one reply)"
            )
        print(json.dumps(read_run(args), indent=2))
        return
    if args.file is None or args.family is None:
        raise UsageError("read: give a reply file (or - for stdin) and --family, or --run RUN")
    (spec,) = families_arg([args.family])
    task: Task | None = None
    if args.task is not None:
        task, _ = find_task(args.task, [args.family])
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
        model = asyncio.run(_model_reading(text, spec, args))
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
    p.add_argument(
        "file", nargs="?", type=path_arg("file"), help="the reply: a text file, or - for stdin"
    )
    p.add_argument(
        "--family", metavar="F", help="the family the reply is about (needed with a file)"
    )
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
    p.add_argument(
        "--run",
        type=path_arg("folder"),
        metavar="RUN",
        help="with --prose-reader: read every message of this run both ways, and their agreement",
    )
    p.set_defaults(func=cmd_read)
