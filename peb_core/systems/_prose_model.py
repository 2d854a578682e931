"""The optional model reader of prose (docs/benchmark.md §2.1): any litellm model asked, with
structured output, what a message decides, in the prose reader's shape (answer, completeness,
gaps, and the fields it says it cannot state). It goes through the one request path every model
system shares (`LitellmSystem`: our reply cache, retries, errors as one line), so a message read
twice by one model is asked once. The deterministic reader (`peb_core.reading`) stays the default
and the only one a headline uses; this one is reported beside it, with their agreement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._json import read_json
from ..reading import ProseReading
from ..tasks import COMPLETENESS, ScenarioFile
from ._model import LitellmSystem, clean_reply

PROSE_READER_VERSION = "prose-reader@1"
"""Names the instructions below: part of every request, so a change to them asks again."""


class ProseReaderError(ValueError):
    """The model could not be asked, or its reply is no reading; the message is one line."""


def prose_reading_schema(spec: ScenarioFile) -> dict[str, Any]:
    """The JSON schema of a reading of a message about the family `spec`: `answer` (null, or
    an object of the fields stated), `completeness` (or null), `gaps` (requirement and scope
    ids) and `affected` (answer fields), every array bounded."""
    fields: dict[str, Any] = {}
    for name, f in spec.answer.items():
        if f.kind == "ordinal":
            fields[name] = {"type": "string", "enum": list(f.values)}
        else:
            fields[name] = {
                "type": "array",
                "items": {"type": "string", "enum": list(f.values)},
                "maxItems": len(f.values),
            }
    ids = [e.id for e in spec.evidence_families] + list(spec.scopes)
    return {
        "type": "object",
        "properties": {
            "answer": {
                "anyOf": [
                    {"type": "object", "properties": fields, "additionalProperties": False},
                    {"type": "null"},
                ]
            },
            "completeness": {
                "anyOf": [{"type": "string", "enum": list(COMPLETENESS)}, {"type": "null"}]
            },
            "gaps": {
                "type": "array",
                "items": {"type": "string", "enum": ids},
                "maxItems": len(ids),
            },
            "affected": {
                "type": "array",
                "items": {"type": "string", "enum": list(spec.answer)},
                "maxItems": len(spec.answer),
            },
        },
        "required": ["answer", "completeness", "gaps", "affected"],
        "additionalProperties": False,
    }


def _instructions(spec: ScenarioFile) -> str:
    fields = "\n".join(
        f"- {name} ({f.kind}: {'one of' if f.kind == 'ordinal' else 'any of'} "
        f"{', '.join(f.values)}): {f.description}"
        for name, f in spec.answer.items()
    )
    requirements = "\n".join(f"- {e.id}: {e.description}" for e in spec.evidence_families)
    scopes = "\n".join(f"- {scope}: {text}" for scope, text in spec.scopes.items())
    return (
        f"You read one message that an assistant wrote to its user about a decision "
        f"({spec.decision_setting}). Say only what the message itself decides, as JSON.\n"
        "- answer: the fields whose value the message states or recommends as its own, advice "
        "included ('treat it as critical'); not a value it negates, makes conditional on "
        "evidence it lacks, reports from a document or person without agreeing, asks about, or "
        "only bounds ('at least high'). null when it states no value and withholds one or says "
        "evidence is missing; {} when it states no value and does neither.\n"
        "- completeness: 'incomplete' when it says something required is missing, hidden or "
        "unseen, or its view is limited; 'complete' when it claims it reviewed all required "
        "records; else null.\n"
        "- gaps: the ids of the requirements and scopes it names as missing or unseen.\n"
        "- affected: the fields it says it cannot state, or that what is missing bears on.\n"
        f"Answer fields:\n{fields}\nRequirements:\n{requirements}\nScopes:\n{scopes}"
    )


def _reading(data: Any, spec: ScenarioFile) -> ProseReading:
    """The model's reply as a reading, or ProseReaderError naming what is wrong."""
    if not isinstance(data, dict) or not {"answer", "completeness", "gaps"} <= data.keys():
        raise ProseReaderError("expected an object with answer, completeness and gaps")
    answer = data["answer"]
    read: dict[str, str | list[str]] | None = None
    if answer is not None:
        if not isinstance(answer, dict):
            raise ProseReaderError(f"answer: expected an object or null, got {answer!r}"[:200])
        read = {}
        for name, f in spec.answer.items():
            if name not in answer:
                continue
            value = answer[name]
            if f.kind == "ordinal" and isinstance(value, str) and value in f.values:
                read[name] = value
            elif f.kind == "set" and isinstance(value, list) and set(value) <= set(f.values):
                read[name] = [v for v in f.values if v in value]
            else:
                raise ProseReaderError(f"answer.{name}: {value!r} is not in the vocabulary"[:200])
    completeness = data["completeness"]
    if completeness not in (None, *COMPLETENESS):
        raise ProseReaderError(
            f"completeness: {completeness!r} is not complete, incomplete or null"
        )
    gaps = data.get("gaps") or []
    ids = [e.id for e in spec.evidence_families] + list(spec.scopes)
    if not isinstance(gaps, list) or not set(gaps) <= set(ids):
        raise ProseReaderError(f"gaps: expected requirement or scope ids, got {gaps!r}"[:200])
    affected = data.get("affected") or []
    if not isinstance(affected, list) or not set(affected) <= set(spec.answer):
        raise ProseReaderError(f"affected: expected answer fields, got {affected!r}"[:200])
    return ProseReading(
        answer=read,
        completeness=completeness,
        gaps=tuple(i for i in ids if i in gaps),
        affected=tuple(f for f in spec.answer if f in affected),
        marks=(),
    )


async def model_read_prose(
    text: str,
    spec: ScenarioFile,
    model: str,
    *,
    api_base: str | None = None,
    cache_folder: Path | None = None,
    use_cache: bool = True,
    timeout_s: float | None = None,
) -> ProseReading:
    """What `model` reads `text` (a message about the family `spec`) to decide, asked once per
    message and model (the reply cache); ProseReaderError with one line if the model cannot be
    asked or answers with no reading."""
    system = LitellmSystem(
        model=model,
        families=[spec],
        api_base=api_base,
        temperature=0.0,
        cache_folder=cache_folder,
        use_cache=use_cache,
    )
    if timeout_s is not None:
        system.timeout_s = timeout_s
    schema = prose_reading_schema(spec)
    messages = [
        {"role": "system", "content": f"[{PROSE_READER_VERSION}] {_instructions(spec)}"},
        {"role": "user", "content": clean_reply(text)[0]},
    ]
    request = system._request(
        messages,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": f"{spec.id}_prose_reading", "schema": schema, "strict": False},
        },
    )
    result = await system._send(request)
    if isinstance(result, str):
        raise ProseReaderError(f"the prose reader model {model!r} failed: {result}")
    completion, _ = result
    try:
        data = read_json(completion.text)
    except ValueError:
        raise ProseReaderError(
            f"the prose reader model {model!r} answered with no JSON reading: "
            f"{json.dumps(completion.text[:80])}"
        ) from None
    try:
        return _reading(data, spec)
    except ProseReaderError as exc:
        raise ProseReaderError(
            f"the prose reader model {model!r} answered no reading: {exc}"
        ) from None
