"""What a system returns for one task, and the record a run stores for it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..tasks import Answer, Completeness, GapReport


class Response(BaseModel):
    """A system's reply. `answer` is None when the system blocks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: Answer | None
    completeness: Completeness
    gap_report: GapReport | None


class Usage(BaseModel):
    """Cost of one reply. `cost_usd` is None when the price is unknown (never guessed as 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool = False


class Reply(BaseModel):
    """What a system gives back for one task.

    `status` is `ok` with a parsed `response`, `invalid` when the reply could not be parsed
    (`raw` keeps it), or `error` when no reply was obtained (`error` says why). Invalid and error
    replies score 0 on answer and gap, are never unsafe, and count in the invalid rate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["ok", "invalid", "error"]
    response: Response | None = None
    raw: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    truncated: bool = False
    """The reply text was longer than a model system keeps (`MAX_REPLY_CHARS`) and was cut."""


class _RecordKey(BaseModel):
    family: str
    task_id: str
    system: str


class ResponseRecord(Reply, _RecordKey):
    """One line of `responses.jsonl`: a reply keyed by family and task id."""
