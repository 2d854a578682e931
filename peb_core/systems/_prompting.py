"""What a model is told in a run: its prompt protocol with the run's prompt options applied
(`prompt_for`). Every way a model is prompted renders through it: our systems (`build_system`:
a model's one-shot request, an agent's start), the inspect task (its samples and the react()
sub-agents of its handoffs) and `peb mcp serve` (`start_task`), so a run option that changes
what a model is told (`runs.Option(prompt=...)`) reaches all of them or none.

A prompt option is a run option's value and how it changes a protocol's messages
(`PromptOption`): `edit(messages, value)`, a pure function returning the new messages. The
prompt a run gives is the protocol with each option's edit applied to every message list it
renders (a one-shot view's and an agent's start), in the order the run declares its options;
its digests are taken of the edited text, so a run under other prompt options is another run
(a resume under them is refused), and without any the protocol is itself, its text and digests
as registered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ._prompts import Message, PromptProtocol, get_protocol

PromptEdit = Callable[[list[Message], Any], list[Message]]
"""How a prompt option changes a protocol's messages: `edit(messages, value)`, new messages."""


@dataclass(frozen=True)
class PromptOption:
    """A run option's value that changes what a model is told.

    Args:
        name: the run option (`system_prompt_suffix`), as a run's config records it.
        value: the value the run gives it.
        edit: how it changes a protocol's messages (`PromptEdit`).
    """

    name: str
    value: Any
    edit: PromptEdit


def _edited(
    render: Callable[[Any], list[Message]], options: Sequence[PromptOption]
) -> Callable[[Any], list[Message]]:
    """`render` followed by each option's edit, in order."""

    def edited(view: Any) -> list[Message]:
        messages = render(view)
        for option in options:
            messages = option.edit([dict(m) for m in messages], option.value)
        return messages

    return edited


def prompt_for(
    protocol: str | PromptProtocol, options: Sequence[PromptOption] = ()
) -> PromptProtocol:
    """The prompt a run gives a model: `protocol` (a `name@version` or bare name, or the
    protocol itself) whose renderings, one-shot (`render(view)`) and an agent's start
    (`agent(start)`), and their chat renderings (`chat`, `agent_chat`), have each of `options`
    applied in turn; its `options` record them (name
    and value) and its digests are of the edited text. Without options, the protocol itself.
    UnknownName (a ValueError) for a protocol nobody registered."""
    chosen = get_protocol(protocol) if isinstance(protocol, str) else protocol
    if not options:
        return chosen
    return replace(
        chosen,
        render=_edited(chosen.render, options),
        agent=None if chosen.agent is None else _edited(chosen.agent, options),
        chat=None if chosen.chat is None else _edited(chosen.chat, options),
        agent_chat=None if chosen.agent_chat is None else _edited(chosen.agent_chat, options),
        options=(*chosen.options, *((o.name, o.value) for o in options)),
    )
