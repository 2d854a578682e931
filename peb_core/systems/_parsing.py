"""Reply text -> Response, deterministically: fenced or embedded JSON, forgiving enum spelling."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from ..tasks import AnswerField
from ._reply import Reply, Response, Usage

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ENUMS = (
    ("complete", "incomplete"),
    ("partial", "blocked"),
    ("partial_answer_permitted", "policy_requires_block"),
)


def _candidates(text: str) -> list[str]:
    found = [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        found.append(text[start : end + 1])
    return [text.strip(), *found]


def extract_json(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text`: whole, in a fenced block, or between prose."""
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _key(value: str) -> str:
    return re.sub(r"[\s\-]+", "_", value.strip().lower())


def _normalise(value: Any, vocab: set[str]) -> Any:
    if isinstance(value, str) and value not in vocab and _key(value) in vocab:
        return _key(value)
    if isinstance(value, list):
        return [_normalise(v, vocab) for v in value]
    return value


def normalise(data: dict[str, Any], schema: tuple[AnswerField, ...]) -> dict[str, Any]:
    """`data` with enum-like strings folded to the vocabulary they match (case, spaces, dashes)."""
    vocab = {v for f in schema for v in f.values} | {v for e in _ENUMS for v in e}
    vocab |= {f.name for f in schema}
    out = {k: _normalise(v, vocab) for k, v in data.items()}
    for part in ("answer", "gap_report"):
        if isinstance(out.get(part), dict):
            out[part] = {k: _normalise(v, vocab) for k, v in out[part].items()}
    return out


def parse_reply(
    text: str, model: type[BaseModel], schema: tuple[AnswerField, ...], usage: Usage
) -> Reply:
    """An `ok` Reply when `text` holds a response valid for the family, else `invalid`."""
    data = extract_json(text)
    if data is None:
        return Reply(status="invalid", raw=text, usage=usage)
    try:
        checked = model.model_validate(normalise(data, schema))
    except ValidationError:
        return Reply(status="invalid", raw=text, usage=usage)
    response = Response.model_validate(checked.model_dump(mode="json"))
    return Reply(status="ok", response=response, raw=text, usage=usage)
