"""`policy_scaffold` (docs/benchmark.md §11): prompt shaping, the paper's "system-level policy
scaffolding". The organisation's completeness rule, one fixed text, is put before whatever a
protocol tells a model (the start of its system message, or a system message of its own), in
every protocol, one-shot and agent, either interface, wherever a model is prompted (a prompt
option: our systems, the inspect task's samples, an MCP client's start). It changes what a model
is told and nothing else: a baseline reads no prompt (refused), and the reply is scored as any
other."""

from __future__ import annotations

from ._intervention import Intervention, Message, Setting

POLICY = (
    "Organisation policy on completeness, which applies to every answer you give: an answer is "
    "only as complete as the evidence you were allowed to see. Before you answer, check each "
    "kind of evidence the request requires against what you have actually seen, current and not "
    "superseded. If any required evidence is missing, hidden from you or out of date, say that "
    "the evidence is incomplete, name what is missing and where it is kept, and say which "
    "answers it bears on; where the policy of the request requires a block, give no answer. "
    "Never present a partial view as the whole."
)
"""The organisation's completeness rule, as the platform puts it before every prompt."""


def scaffolded(messages: list[Message]) -> list[Message]:
    """`messages` with POLICY first: at the start of a leading system message, or as a system
    message of its own before them."""
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{POLICY}\n\n{messages[0].get('content', '')}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": POLICY}, *messages]


def _refuses(setting: Setting) -> str | None:
    if not setting.model:
        return (
            f"policy_scaffold puts a policy before what a model is told; {setting.system} is a "
            "baseline and reads no prompt (run a model, or agent:<model>)"
        )
    return None


POLICY_SCAFFOLD = Intervention(
    "policy_scaffold",
    "the organisation's completeness rule put before every prompt a model is given",
    refuses=_refuses,
    prompt=scaffolded,
)
