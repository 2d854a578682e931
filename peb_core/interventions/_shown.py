"""What the platform shows the consumer in place of a system's response (docs/benchmark.md §11),
for the interventions whose response step speaks: the system's own reply read as scoring reads
it (`own_reading`), and a response built from it with the platform's claim and gap report
(`restated`: the system's own JSON object with those parts replaced, under `--interface
submit`; its words followed by the platform's, under `chat`)."""

from __future__ import annotations

import json
from typing import Any

from ..scoring import ReadReply, Vocabulary, find_object, read_reply
from ..systems import Reply
from ..tasks import GapReport, fold
from ._intervention import AtResponse


def own_reading(reply: Reply, given: AtResponse) -> ReadReply:
    """What the system's own reply decides, read as scoring reads it (in prose under `chat`)."""
    vocabulary = Vocabulary.of(given.family)
    return read_reply(reply.raw or "", vocabulary, prose=given.interface == "chat")


def restated(reply: Reply, given: AtResponse, said: str, gap: GapReport | None) -> str:
    """The response the consumer is shown: under `submit`, the system's own JSON object with
    `completeness` `incomplete` and, where `gap` is given, the platform's gap report in place of
    its own (its answer kept as given); under `chat`, the system's words followed by `said`.
    The reply must be readable (`own_reading`)."""
    raw = reply.raw or ""
    if given.interface == "chat":
        return f"{raw.rstrip()}\n\n{said}"
    found = find_object(raw)
    kept: dict[str, Any] = {}
    if found is not None:
        replaced = {"completeness"} | ({"gap_report"} if gap is not None else set())
        kept = {k: v for k, v in found[0].items() if fold(str(k)) not in replaced}
    kept["completeness"] = "incomplete"
    if gap is not None:
        kept["gap_report"] = json.loads(gap.model_dump_json())
    return json.dumps(kept, ensure_ascii=False)
