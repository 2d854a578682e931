"""The agent system `agent:<litellm model>`: a tool-calling loop over one task's session.

An episode starts with the prompt protocol's agent messages (the request, the answer fields and,
under `structured_gap@1`, the contract and policy; no document) and the session's tools
(`search`, `open`, `submit`, and any tool registered beside them). Each step sends the
conversation through the one litellm request path (`LitellmSystem._send`: our cache, keyed per
step; retries; cost), carries out every tool call the reply makes through the session, in order,
and appends the results (the episode recorder, `Episode`: one step per model turn; the words of a
user who pushes back follow as a user message). It ends when
the session says the episode is over (`ok`: at the first accepted submit, or under `--followup
pressure` at the submit after the user pushed back; the last submitted response is the reply;
`escalated`: at an accepted `escalate`, offered under a protocol that asks for it),
or when `max_steps` requests were made or `token_budget` tokens were spent (`ok` with the
response submitted before the user pushed back, if any; else `no_submit`); a request that fails
after its retries ends it as an `error`, and a resumed run plays the episode again, its steps
served from the cache up to where it failed. Every step is kept in the reply's `trace`. On a
task that lists sub-agents the session also offers `delegate`: each handoff is an episode of
`delegate_system` (this system unless another is given), nested in the step that made it, and
its requests count against this episode's token budget and cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..access import (
    DEFAULT_DISCLOSURE,
    DEFAULT_FOLLOWUP,
    DEFAULT_INTERFACE,
    DEFAULT_PUSHES,
    AgentView,
    check_followup,
    check_pushes,
    get_disclosure,
)
from ..tasks import ViewKind
from ._episode import Episode, followup_config
from ._handoffs import Handoffs
from ._model import Completion, LitellmSystem, system_name
from ._prompts import agent_reminder
from ._reply import Reply, Step, Usage

DEFAULT_MAX_STEPS = 24
DEFAULT_TOKEN_BUDGET = 200_000
"""Prompt plus completion tokens, summed over an episode's requests as the provider counts them
(every request re-sends the conversation so far, so this grows faster than the conversation)."""
AGENT_PREFIX = "agent:"


@dataclass
class AgentSystem(LitellmSystem):
    """A litellm model run as an agent over the `agent` view under a disclosure mode; see
    `config()` for what is recorded."""

    disclosure: str = DEFAULT_DISCLOSURE
    max_steps: int = DEFAULT_MAX_STEPS
    token_budget: int | None = DEFAULT_TOKEN_BUDGET
    """None: no token budget."""
    dialect: Literal["openai", "llama.cpp"] = "openai"
    """The shape of the conversation sent back: `openai` (what providers expect: a tool result
    is a `tool` message, a reply that only calls tools has null content), or `llama.cpp` for
    its `chatml-function-calling` chat format, which serves the embedded models: its template
    drops `tool` messages and needs every message's content, so a tool result is a `user`
    message naming its call and a reply's content is never null."""
    delegate_system: Any = None
    """The agent system that runs handoffs (`delegate`); None: this one."""
    followup: str = DEFAULT_FOLLOWUP
    """What the user does after a response (`access.FOLLOWUPS`): under `pressure` it pushes
    back on a response that reports a gap (docs/benchmark.md §10.3)."""
    pushes: int = DEFAULT_PUSHES
    """How many times the user pushes back at most (`--pushes`)."""

    def __post_init__(self) -> None:
        get_disclosure(self.disclosure)  # a ValueError naming the modes for another
        check_followup(self.followup)
        check_pushes(self.pushes)
        if self.protocol.agent is None:
            raise ValueError(
                f"protocol {self.protocol.id} has no agent rendering; for an agent, the access "
                "layer's --disclosure says what is withheld"
            )
        super().__post_init__()

    @property
    def name(self) -> str:
        return system_name(f"{AGENT_PREFIX}{self.model}", self.protocol.id)

    @property
    def view(self) -> ViewKind:
        return "agent"

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "disclosure": self.disclosure,
            "max_steps": self.max_steps,
            "token_budget": self.token_budget,
            "dialect": self.dialect,
            **_delegate_config(self.delegate_system),
            **followup_config(self.followup, self.pushes, self.interface),
        }

    def digests(self) -> dict[str, str]:
        return {**super().digests(), "protocol_text": self.prompt.agent_digest}

    async def respond(self, view: AgentView) -> Reply:
        """One episode over `view`: its start, and a session under this system's disclosure
        mode."""
        assert self.prompt.agent is not None
        handoffs = Handoffs(self.delegate_system or self.as_sub_agent()) if view.delegates else None
        session = view.session(
            self.disclosure,
            handoffs,
            self.followup,
            asks=self.prompt.tools,
            parts=self.prompt.parts,
            pushes=self.pushes,
            interface=self.interface,
        )
        episode = Episode(session)
        tools = session.tools
        messages: list[dict[str, Any]] = list(self.prompt.agent(view.start))
        sent: list[dict[str, str]] = list(messages)
        told = 0
        for number in range(self.max_steps):
            spent = episode.spent
            if self.token_budget is not None and spent >= self.token_budget:
                return episode.out_of_budget(f"token budget {self.token_budget:,} spent "
                                             f"({spent:,} tokens) without a submit")  # fmt: skip
            episode.starting(self.max_steps)
            started = time.monotonic()
            result = await self._send(self._request(messages, tools=tools, tool_choice="auto"))
            if isinstance(result, str):
                return episode.reply("error", f"step {number + 1}: {result}")
            done, cached = result
            usage = Usage(
                prompt_tokens=done.prompt_tokens,
                completion_tokens=done.completion_tokens,
                latency_s=round(time.monotonic() - started, 3),  # the request's
                cost_usd=done.cost_usd,
                cached=cached,
            )
            step = await episode.turn(done.calls, sent=sent, content=done.text or None, usage=usage)
            messages.append(_assistant(done, self.dialect))
            messages.extend(self._results(step))
            if session.over:
                return episode.reply("ok")
            if session.pushed > told:  # the user's push, as its own turn
                told, sent = session.pushed, [{"role": "user", "content": session.pushback or ""}]
            else:
                reminder = agent_reminder(self.prompt.tools, self.interface)
                sent = [] if step.tool_calls else [reminder]
            messages.extend(sent)
        return episode.out_of_budget(f"no submit within {self.max_steps} steps")

    def as_sub_agent(self) -> AgentSystem:
        """This system as it runs its own handoffs: a sub-agent always submits (its response
        goes back through `delegate`) and meets no user."""
        if self.interface == DEFAULT_INTERFACE:
            return self
        return replace(self, interface=DEFAULT_INTERFACE, followup=DEFAULT_FOLLOWUP)

    def _results(self, step: Step) -> list[dict[str, Any]]:
        """The messages that carry a step's tool results back to the model."""
        pairs = zip(step.tool_calls, step.results, strict=True)
        if self.dialect == "llama.cpp":
            return [
                {"role": "user", "content": f"Result of {call.name} ({call.id}):\n{shown}"}
                for call, shown in pairs
            ]
        return [
            {"role": "tool", "tool_call_id": call.id, "content": shown} for call, shown in pairs
        ]


def _delegate_config(system: Any) -> dict[str, Any]:
    """The config key of a delegate system other than the requester (none for itself)."""
    if system is None:
        return {}
    return {"delegate_system": {"name": system.name, **system.config()}}


def _assistant(done: Completion, dialect: str) -> dict[str, Any]:
    """The reply as the next request carries it back (OpenAI's message shape; under the
    `llama.cpp` dialect its content is a string, even empty)."""
    content = done.text if dialect == "llama.cpp" else done.text or None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if done.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in done.calls
        ]
    return message
