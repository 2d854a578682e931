"""How the notebooks show a frame, a task's documents, its register, a worked example, an
agent's episode replayed step by step and a corpus through the access layer, as marimo
elements, written once for every notebook. marimo is imported on first use."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from ..._markdown import markdown_code, markdown_text
from ...scoring import (
    CALIBRATION,
    ESCALATION,
    METRICS,
    REPEATS,
    SCREEN,
    float_formats,
    format_float,
    glance,
    reply_markdown,
)
from ...tasks import (
    ScenarioFile,
    Task,
    document_cards,
    documents_frame,
    register_frame,
    stale_facts,
)
from ._access import access_search, corpus_access
from ._example import WorkedExample
from ._explore import POLICIES, register_rows
from ._marks import (
    MessageView,
    PastedReading,
    decision_frame,
    mark_legend,
    message_views,
    verdict_parts,
)
from ._replay import (
    LEAKED,
    PUSHED,
    Replay,
    contract_line,
    corpus_at,
    corpus_counts,
    grant_events,
    handoff_line,
    handoffs_at,
    jump_steps,
    message_at,
    step_calls,
    step_label,
    step_marks,
    step_table,
)
from ._runs import has_repeats
from ._status import RunLine

if TYPE_CHECKING:
    from marimo import Html


def shown_value(value: Any) -> str:
    """A table cell's text as a person reads it: `yes` or `no` for a flag, a list's items
    comma-separated, nothing for a missing value (never `None`, `True` or `False`)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(shown_value(v) for v in value)
    return str(value)


def cell_formats(frame: pl.DataFrame) -> dict[str, Callable[[Any], str]]:
    """How a table shows each column of `frame`: every float to three decimals
    (`scoring.float_formats`), every other column through `shown_value`."""
    floats = float_formats(frame)
    return {name: floats.get(name, shown_value) for name in frame.columns}


def table(frame: pl.DataFrame, **options: Any) -> Html:
    """A frame as a marimo table for reading: no row selection, no column summaries or types,
    every float to three decimals, flags as yes or no and missing values blank
    (`cell_formats`); `options` as `marimo.ui.table` takes them."""
    import marimo as mo

    shown: dict[str, Any] = {
        "selection": None,
        "show_column_summaries": False,
        "show_data_types": False,
        "format_mapping": cell_formats(frame),
        **options,
    }
    return mo.ui.table(frame, **shown)


def documents_view(
    documents: pl.DataFrame, *, titles: tuple[str, str] = ("Visible", "Hidden")
) -> Html:
    """A `tasks.documents_frame` as two columns of cards, the visible beside the hidden."""
    import marimo as mo

    def column(title: str, visible: bool) -> Html:
        cards = document_cards(documents, visible=visible)
        return mo.vstack([mo.md(f"### {title}"), *(mo.md(c) for c in cards or ["_(none)_"])])

    return mo.hstack(
        [column(titles[0], True), column(titles[1], False)], widths="equal", align="start"
    )


_STALE = {"color": "#b00020", "textDecoration": "line-through"}


RowStyle = Callable[[dict[str, Any], str], dict[str, Any]]
"""CSS for a cell from its whole row and its column."""


def _style_rows(frame: pl.DataFrame, style: RowStyle) -> Callable[[str, str, Any], dict[str, Any]]:
    """A marimo table's `style_cell` (row id, column, value) from a style of whole rows."""
    rows = frame.to_dicts()
    return lambda row_id, column, _value: style(rows[int(row_id)], column)


def task_documents_view(
    task: Task, spec: ScenarioFile, *, titles: tuple[str, str] = ("Visible", "Hidden")
) -> Html:
    """A task's documents in two columns (see `documents_view`), then its register (see
    `register_view`)."""
    import marimo as mo

    return mo.vstack(
        [
            documents_view(documents_frame(task, spec), titles=titles),
            register_view(register_frame(task, spec), stale_facts(task)),
        ]
    )


def register_view(register: pl.DataFrame | None, stale: pl.DataFrame) -> Html:
    """The register (`register_rows`: required records first, those the view misses first of
    all) beside each record's copy and master, stale copies' stamps struck through and missing
    requirements marked, and each stale copy's facts struck through beside the current
    version's and the oracle's; empty for a task without a register."""
    import marimo as mo

    if register is None:
        return mo.md("")
    shown = register_rows(register)

    def register_style(row: dict[str, Any], column: str) -> dict[str, Any]:
        if column == "copy_stamp" and row["copy_state"] == "stale":
            return _STALE
        if column == "contract" and row["contract"] == "missing":
            return {"color": "#b00020", "fontWeight": "bold"}
        return {}

    def stale_style(_row: dict[str, Any], column: str) -> dict[str, Any]:
        return _STALE if column == "stale" else {}

    parts = [
        mo.md(
            "### Register: each kind of record, its current version, and the documents of it\n"
            "The records the contract requires come first. A copy whose stamp is older than "
            "the register's is `stale` (struck through): it does not cover its requirement. "
            "`contract`: `missing` where the view holds no current copy of a required record, "
            "`covered` where it does, blank for a record the contract does not require; "
            "`master`: the hidden current version, kept in `kept_in`."
        ),
        table(
            shown,
            page_size=len(shown),
            style_cell=_style_rows(shown, register_style),
            freeze_columns_left=["record"],
            show_search=False,
        ),
    ]
    if stale.height:
        parts += [
            mo.md(
                "### Stale copies: what they say against the current version and the oracle\n"
                "A system that takes a stale copy for current answers with the struck values."
            ),
            table(stale, page_size=len(stale), style_cell=_style_rows(stale, stale_style)),
        ]
    return mo.vstack(parts)


SEVERITY_COLOURS = {"success": "#1b7f3b", "warn": "#9a6700", "danger": "#b00020", "info": "#0b5cad"}
"""The text colour of a status of each severity."""


def status_table(lines: Sequence[RunLine]) -> Html:
    """The runs started from the workbench, one current status each, newest first: the run,
    its status (coloured by severity) and when it was last true."""
    frame = pl.DataFrame(
        {
            "run": [line.run for line in lines],
            "status": [line.text for line in lines],
            "at": [line.time for line in lines],
        },
        schema={"run": pl.String, "status": pl.String, "at": pl.String},
    )
    colours = [SEVERITY_COLOURS[line.severity] for line in lines]

    def style(row_id: str, column: str, _value: Any) -> dict[str, Any]:
        return {"color": colours[int(row_id)], "fontWeight": "bold"} if column == "status" else {}

    return table(
        frame,
        page_size=max(len(lines), 1),
        style_cell=style,
        wrapped_columns=["status"],
        show_search=False,
        show_download=False,
        label="Runs started here",
    )


def _full_text(_row_id: str, _column: str, value: Any) -> str:
    return "" if value is None else str(value)


AGENT_KEYS = ("disclosure", "contract", "followup")
"""What a scorecard row of an agent's run is keyed by besides its run, family and tier: its
disclosure mode, where its contract came from and whether a user pushed back (runs that differ
only there are told apart)."""


def scorecard_glance(card: pl.DataFrame) -> pl.DataFrame:
    """A scorecard as the notebooks show it: `scoring.glance` with intervals, keyed by run, its
    label (what sets it apart from the runs picked with it), family and tier; where a row is an
    agent's, its disclosure mode, contract source (given, or found in the corpus) and follow-up
    (`AGENT_KEYS`) beside them; when a row has K > 1 repeats, its `repeats` (K) beside them and
    the repeat metrics (unsafe_any@K, consistent@K) among the metrics, else neither (for runs
    without repeats they are null, never 0); the escalation and calibration metrics only where
    a row has one (a run whose protocol asks for a next step, a handoff or a confidence)."""
    repeated = has_repeats(card)
    asked = [m for m in (*ESCALATION, *CALIBRATION) if m.name in card.columns]
    asking = any(card[m.name].is_not_null().any() for m in asked)
    agents = "contract" in card.columns and (card["contract"] != "-").any()
    return glance(
        card,
        intervals=True,
        keys=[
            "run",
            "run_label",
            "family",
            "tier",
            *(AGENT_KEYS if agents else []),
            *(["repeats"] if repeated else []),
        ],
        metrics=[
            m for m in SCREEN if (repeated or m not in REPEATS) and (asking or m not in asked)
        ],
    )


def scorecard_table(card: pl.DataFrame) -> Html:
    """A scorecard at a glance (`scorecard_glance`), 25 rows a page, its run and family columns
    pinned, every cell's whole text on hover, each metric's definition on its header, and a
    status that is not `ok` in red."""
    shown = scorecard_glance(card)

    def style(_row_id: str, column: str, value: Any) -> dict[str, Any]:
        if column == "status" and value != "ok":
            return {"color": "#b00020", "fontWeight": "bold"}
        return {}

    return table(
        shown,
        page_size=25,
        freeze_columns_left=["run", "family"],
        hover_template=_full_text,
        header_tooltip={
            m.label: f"{m.title}: over {m.over}" for m in METRICS if m.label in shown.columns
        },
        style_cell=style,
        label="Scorecard rows",
    )


Section = Callable[[WorkedExample], Sequence["Html"]]
"""A part of the worked example: marimo elements from the example."""


def _state_name(state: int) -> str:
    """A state of a grant schedule as the heading names it."""
    return "at the start" if state == 0 else f"after change {state}"


def _heading(ex: WorkedExample) -> Sequence[Html]:
    import marimo as mo

    task, row = ex.task, ex.explanation.scores
    judged = (
        f" (judged in the state of its grant schedule {_state_name(row['grant_state'])})"
        if task.grants
        else ""
    )
    return [
        mo.md(
            f"{task.prompt}\n\n"
            f"Completeness `{row['completeness']}`{judged}, policy "
            f"`{POLICIES[task.contract.partial_response_permitted]}`, topologies "
            f"`{', '.join(task.topologies) or '-'}`, verdict **{row['verdict']}**; answer score "
            f"{format_float(row['answer_score'])}, gap score {format_float(row['gap_score'])}."
        )
    ]


def _documents(ex: WorkedExample) -> Sequence[Html]:
    return [task_documents_view(ex.task, ex.spec)]


def _answer(ex: WorkedExample) -> Sequence[Html]:
    import marimo as mo

    shown = ex.explanation
    return [
        mo.md(
            "### Answer: the complete-world and authorized-view answers against the response\n"
            f"The response is scored against `{ex.target}` (`expected`)."
        ),
        table(
            shown.fields,
            wrapped_columns=["complete_answer", "authorized_answer", "expected", "response"],
        ),
        mo.md("### Gap report: oracle against the response"),
        table(shown.gap, wrapped_columns=["oracle", "response"]),
        mo.md(
            f"Mean field score {_mean(shown.fields['score'])}, mean gap part "
            f"score {_mean(shown.gap['score'])}. Schema violations: "
            + (", ".join(markdown_code(v) for v in shown.violations) or "none")
            + "."
        ),
    ]


def _mean(scores: pl.Series) -> str:
    mean = scores.mean()
    return format_float(float(mean) if isinstance(mean, int | float) else None)


def _reply(ex: WorkedExample) -> Sequence[Html]:
    """The system's reply as it gave it, and where a run's intervention spoke (docs/benchmark.md
    §11) what the platform said and the response the consumer was shown (what is scored)."""
    import marimo as mo

    raw = ex.record.raw if ex.record is not None else None
    shown = [mo.md("### The reply (pretty-printed if it is JSON)"), mo.md(reply_markdown(raw))]
    platform = ex.record.platform if ex.record is not None else None
    if platform is not None:
        shown += [
            mo.md(f"### What the platform said (`{platform.intervention}`)\n\n{platform.said}"),
            mo.md("### The response the consumer was shown (scored)"),
            mo.md(reply_markdown(platform.response)),
        ]
    # A reply in a chat, read as prose (an episode's messages are read in its replay).
    one_shot = ex.record is not None and not ex.record.trace
    return [*shown, *messages_view(message_views(ex))] if one_shot else shown


EXAMPLE_SECTIONS: dict[str, Section] = {
    "heading": _heading,
    "documents": _documents,
    "answer": _answer,
    "reply": _reply,
}
"""The parts of a worked example, in order. A system that leaves more than a reply (an agent's
steps) adds its own part here."""


def example_view(
    ex: WorkedExample, title: str, *, note: str = "", skip: Sequence[str] = ()
) -> Html:
    """A worked example under `title` (Markdown), `note` after its heading, every part of
    `EXAMPLE_SECTIONS` but those in `skip`."""
    import marimo as mo

    parts = [mo.md(title + (f"  \n_{note}_" if note else ""))]
    for name, section in EXAMPLE_SECTIONS.items():
        if name not in skip:
            parts += section(ex)
    return mo.vstack(parts)


_STATE_STYLES = {
    "opened": {"color": "#1b7f3b", "fontWeight": "bold"},
    "opened while granted": {"color": "#6a1b9a", "fontWeight": "bold"},
    "probed": {"color": "#b00020", "fontWeight": "bold"},
    "withheld": {"color": "#9a6700", "fontWeight": "bold"},
    "surfaced": {"color": "#0b5cad"},
}
_HIDDEN = {"backgroundColor": "#f3f0f0", "fontStyle": "italic"}
_GAP = {"color": "#b00020", "fontWeight": "bold"}


def _claims_table(claims: pl.DataFrame, label: str) -> Html:
    def claims_style(row: dict[str, Any], column: str) -> dict[str, Any]:
        return _GAP if row["gap"] is not None and column in ("requirement", "gap") else {}

    return table(
        claims,
        page_size=max(claims.height, 1),
        style_cell=_style_rows(claims, claims_style),
        wrapped_columns=["description"],
        label=label,
    )


def handoff_view(row: dict[str, Any], sub: Replay) -> Html:
    """A handoff (a row of `Replay.handoffs`) and its sub-episode: who it went to, under which
    scopes, what it reported and whether its gap reached the final report (`handoff_line`);
    the sub-agent's every tool call and what it saw; then, folded, requirement by requirement
    what it saw against what it claimed, its response, and its own handoffs."""
    import marimo as mo

    folded: dict[str, Html] = {
        "The sub-agent's response": mo.md(reply_markdown(sub.record.raw or sub.record.error)),
        "What the sub-agent saw against what it claimed": _claims_table(
            sub.claims, "Sub-agent saw against claimed"
        ),
    }
    for inner, inner_sub in zip(sub.handoffs.iter_rows(named=True), sub.subs, strict=True):
        folded[f"Its handoff {inner['handoff']}"] = handoff_view(inner, inner_sub)
    return mo.vstack(
        [
            mo.md(handoff_line(row)),
            table(
                step_table(sub),
                page_size=10,
                wrapped_columns=["saw"],
                label=f"Steps of sub-agent {markdown_text(row['to'])}",
            ),
            mo.accordion(folded),
        ]
    )


def text_view(text: str) -> Html:
    """Text as it was written (a model's message, a call's arguments, what a tool showed), shown
    as text: every character HTML reads as markup escaped, long lines wrapped, nothing cut."""
    import marimo as mo

    return mo.Html(f'<pre style="{_TEXT}">{html.escape(text)}</pre>')


_TEXT = (
    "white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; padding: 0.5em; "
    "font-size: 0.85em; background: #f6f8fa; border-radius: 4px; max-height: 24em; "
    "overflow-y: auto"
)


def step_slider(
    replay: Replay, step: int = 1, on_change: Callable[[Any], None] | None = None
) -> Html:
    """The step slider of an episode (from 1 to its last step) at `step`, labelled with each
    step marked on it (`step_label`); `on_change` is called with the step picked."""
    import marimo as mo

    return mo.ui.slider(
        start=1,
        stop=replay.n_steps,
        value=max(1, min(step, replay.n_steps)),
        label=step_label(replay),
        show_value=True,
        full_width=True,
        on_change=on_change,
    )


def jump_buttons(replay: Replay, on_jump: Callable[[int], None]) -> Html:
    """A button per step a person can jump to (`jump_steps`: each finding's, then each step
    marked on the slider, labelled with what happened there), in that order; a press calls
    `on_jump` with its step."""
    import marimo as mo

    def jump(step: int) -> Callable[[Any], None]:
        return lambda _value: on_jump(step)

    return mo.ui.array(
        [
            mo.ui.button(label=markdown_text(label), on_click=jump(step))
            for step, label in jump_steps(replay)
        ]
    )


_MARK_COLOURS = {"grant": "#6a1b9a", "push": "#b00020", "leak": "#d35400"}


def _mark_colour(line: str) -> str:
    """The colour of a step mark (`step_marks`) by what happened there."""
    if line.startswith("the user"):
        return _MARK_COLOURS["push"]
    return _MARK_COLOURS["leak" if line.startswith(LEAKED) else "grant"]


def _marks_strip(replay: Replay, marks: Sequence[tuple[int, str]]) -> Html:
    """The steps marked on the slider as ticks on a strip as wide as the slider, each at its
    step's place, with its step and what happened there."""
    import marimo as mo

    span = max(replay.n_steps - 1, 1)
    ticks = []
    for step, line in marks:
        colour = _mark_colour(line)
        at = 100 * (step - 1) / span
        ticks.append(
            f'<div title="{html.escape(f"step {step}, {line}")}" style="position: absolute; '
            f"left: {at:.2f}%; top: 0; height: 100%; border-left: 3px solid {colour}; "
            f'padding-left: 3px; font-size: 0.75em; color: {colour}; white-space: nowrap">'
            f"{step}</div>"
        )
    return mo.Html(
        '<div style="position: relative; height: 1.4em; margin: 0 0.5em" '
        f'aria-label="Marked steps">{"".join(ticks)}</div>'
    )


def message_view(message: MessageView) -> Html:
    """A message as the prose reader read it: what it counts as and why (its line, the counts
    in bold), then its text with each span read marked (`MessageView.html`; hover a mark for
    what it was read as)."""
    import marimo as mo

    why = "; ".join(f"**{c}**: {markdown_text(w)}" for c, w in verdict_parts(message.line))
    where = f"Step {message.step}" if message.step is not None else "The reply"
    pushed = f", after {message.push} push{'es' if message.push != 1 else ''}" * (message.push > 0)
    return mo.vstack(
        [
            mo.md(f"{where}{pushed}: {why}"),
            mo.Html(message.html),
        ],
        gap=0.25,
    )


def messages_view(messages: Sequence[MessageView]) -> list[Html]:
    """Every message of a reply as the prose reader read it (`message_view`), under a heading
    with the legend of the marks; nothing for none."""
    import marimo as mo

    if not messages:
        return []
    leaks = sum(m.leak for m in messages)
    return [
        mo.md(
            f"### What it said: {len(messages)} message{'s' * (len(messages) != 1)}, "
            f"{leaks} counted as a leak\nEvery message with text is read by the prose reader "
            "as scoring reads it: the words it took as an asserted value, a claim of "
            "completeness, a named gap, a refusal, a field it cannot state, or a value set "
            "aside are marked (hover a mark for what it was read as)."
        ),
        mo.Html(mark_legend()),
        *(message_view(m) for m in messages),
    ]


def pasted_view(pasted: PastedReading) -> Html:
    """A reply pasted into the task explorer as `peb read` reads it: how it was read (as a
    response's JSON object, or as prose), what it decides (`decision_frame`), and for prose
    the reply with the words read marked, under the legend."""
    import marimo as mo

    how = (
        "read as prose by the prose reader: the words it read are marked (hover a mark for "
        "what it was read as)"
        if pasted.reading is not None
        else "read as a response's JSON object by the reply reader (nothing to mark)"
    )
    return mo.vstack(
        [
            mo.md(f"The reply, {how}; `peb read` prints the same reading."),
            table(decision_frame(pasted.decision), label="What the reply decides"),
            *([mo.Html(mark_legend())] if pasted.reading is not None else []),
            mo.Html(pasted.html),
        ]
    )


def _findings_view(replay: Replay, buttons: Sequence[Html]) -> list[Html]:
    """Why the episode scored as it did (`Replay.findings`), a line each with its button to
    jump to its step, under its verdict."""
    import marimo as mo

    verdict = replay.findings  # the rows, in `results.FINDINGS` order
    if verdict.is_empty():
        return []
    lines: list[Html] = []
    at = iter(buttons)
    for row in verdict.iter_rows(named=True):
        said = mo.md(f"**{row['kind']}**: {markdown_text(row['words'])}")
        button = next(at, None) if row["step"] is not None else None
        lines.append(
            mo.hstack([button, said], justify="start", align="center")
            if button is not None
            else said
        )
    return [mo.md("#### Why it scored as it did"), *lines]


_OPTIONAL = ("store", "contract_source")
"""Columns of `corpus_at` that say nothing on most tiers (no stores; a contract given)."""
_CORPUS_HEADERS = {"evidence_family": "evidence", "contract_source": "source"}
"""Shorter headers of `corpus_at`'s columns, so the corpus table fits a 1440 px page."""


def _says_something(corpus: pl.DataFrame, column: str) -> bool:
    """Whether a corpus table shows `column`: always, but for one of `_OPTIONAL` that is empty
    or never set in it."""
    if column not in _OPTIONAL:
        return True
    values = corpus[column].drop_nulls()
    return bool(values.any()) if values.dtype == pl.Boolean else not values.is_empty()


def _corpus_table(corpus: pl.DataFrame, style: RowStyle, *, wrapped: str, label: str) -> Html:
    """A corpus as a table (a row per document, styled by `style`, its `wrapped` column
    wrapped), its doc id pinned, the columns that say nothing on its tier left out and two
    headers shortened, so that it fits a 1440 px page."""
    shown = corpus.select(c for c in corpus.columns if _says_something(corpus, c))
    return table(
        shown.rename(_CORPUS_HEADERS, strict=False),
        page_size=12,
        style_cell=_style_rows(corpus, style),
        freeze_columns_left=["doc_id"],
        wrapped_columns=[wrapped],
        label=label,
    )


def replay_view(
    replay: Replay,
    step: int,
    step_pick: Html | None = None,
    jumps: Sequence[Html] | None = None,
) -> Html:
    """An agent's episode at `step` (from 1): why it scored as it did (`Replay.findings`, each
    with a button of `jumps` to its step: `jump_buttons`), `step_pick` (the step slider) with
    the steps marked on it (the push, each grant change, each message that leaks:
    `step_marks`) and their buttons, over the message the agent wrote at that step as the
    prose reader read it (`message_view`) and that step's tool calls, each with its
    arguments, what it saw and the whole result it was shown (as text), then the corpus as
    the episode left it by then (`corpus_at`), and the sub-episode of each `delegate` call of
    the step (`handoff_view`); then, requirement by requirement, what it saw against what it
    claimed (`Replay.claims`, gaps in red), every message of the episode read
    (`messages_view`), every handoff of the episode and every call of the episode (this
    step's in bold, later ones greyed). Each grant change of a task's schedule is an event at
    the call it took effect at (`grant_events`). Everything the agent or a tool wrote is shown
    as text."""
    import marimo as mo

    step = max(1, min(step, replay.n_steps))
    calls = step_calls(replay, step)
    events = grant_events(replay)
    marks = step_marks(replay)
    buttons = list(jumps or [])
    n_found = sum(s is not None for s in replay.findings["step"])
    said: list[Html] = []
    message = message_at(replay, step)
    if message is not None:
        said += [mo.md("The model wrote, as the prose reader read it:"), message_view(message)]
    for call in calls:
        said.append(
            mo.md(
                (f"_{call['grant']}, before this call was answered._  \n" if call["grant"] else "")
                + f"**{markdown_text(call['tool'] or '(no tool call)')}** "
                + markdown_text(call["saw"])
                + (
                    "  \n_Withheld from it by the scope filter:_ "
                    + markdown_text(", ".join(call["withheld"]))
                    if call["withheld"]
                    else ""
                )
            )
        )
        if call["content"] and message is None:
            said += [mo.md("The model wrote:"), text_view(call["content"])]
        if call["arguments"] is not None:
            said.append(
                mo.accordion(
                    {
                        "Arguments": text_view(call["arguments"]),
                        "What the tool showed it": text_view(call["result"] or ""),
                    }
                )
            )
    sub_episodes = [
        mo.vstack(
            [mo.md(f"#### Step {step}: the sub-episode it handed off"), handoff_view(row, sub)]
        )
        for row, sub in handoffs_at(replay, step)
    ]
    corpus = corpus_at(replay, step)
    source = contract_line(replay, step)

    def corpus_style(row: dict[str, Any], column: str) -> dict[str, Any]:
        style = {} if row["visible"] else dict(_HIDDEN)
        if column == "state":
            style.update(_STATE_STYLES.get(row["state"], {}))
        if row["contract_source"]:
            style["fontWeight"] = "bold"
        return style

    steps = step_table(replay)

    def steps_style(row: dict[str, Any], _column: str) -> dict[str, Any]:
        if row["step"] == step:
            return {"fontWeight": "bold", "backgroundColor": "#eef4fb"}
        return {"color": "#999999"} if row["step"] > step else {}

    claims = replay.claims
    n_gaps = claims.height - claims["gap"].null_count()
    handoffs = (
        [
            mo.md(
                f"### Handoffs ({replay.handoffs.height}), each under the step that made it\n"
                + "  \n".join(
                    f"Step {row['step']}: {handoff_line(row)}"
                    for row in replay.handoffs.iter_rows(named=True)
                )
            )
        ]
        if replay.handoffs.height
        else []
    )
    pushed = replay.findings.filter(pl.col("kind").is_in(PUSHED))
    header = "".join(
        f" ({markdown_text(row['words'].split(';')[0])})" for row in pushed.iter_rows(named=True)
    )
    return mo.vstack(
        [
            mo.md(
                f"### Episode replay: step {step} of {replay.n_steps}{header}\n"
                "What the agent called and was shown at this step, then the corpus as it "
                "stood by then: `opened` by the agent, `probed` (an open of a hidden id, "
                "refused), `withheld` from a search by the scope filter, `surfaced` among a "
                "search's hits, or `unseen`. Hidden documents (at the episode's end) are shaded; "
                "the agent never saw their text, but for those `opened while granted` (read "
                "while a grant held that had ended by the end)."
            ),
            *_findings_view(replay, buttons[:n_found]),
            step_pick if step_pick is not None else mo.md(""),
            _marks_strip(replay, marks) if marks else mo.md(""),
            mo.hstack([mo.md("**Marked:**"), *buttons[n_found:]], justify="start", wrap=True)
            if marks and buttons[n_found:]
            else mo.md(""),
            mo.md(source) if source is not None else mo.md(""),
            mo.md(
                "**Grant changes:** "
                + "; ".join(
                    f"{'**' if at <= step else ''}step {at}, {line}{'**' if at <= step else ''}"
                    for at, line in events
                )
            )
            if events
            else mo.md(""),
            mo.md(f"#### Step {step}: its tool calls"),
            *said,
            *sub_episodes,
            mo.md(f"#### The corpus by step {step}\n{corpus_counts(corpus)}"),
            _corpus_table(corpus, corpus_style, wrapped="title", label="Corpus by this step"),
            mo.md(
                "### What it saw against what it claimed, requirement by requirement\n"
                f"{n_gaps} of {claims.height} requirements part: `unreported gap` (missing, "
                "not reported), `claimed unseen` (not reported missing, yet no current record "
                "of it was opened, by the agent or a sub-agent it handed off to), `false gap` "
                "(reported missing while in view). `opened` counts a record read while a grant "
                "held, though the grant had ended by the submit."
            ),
            _claims_table(claims, "Saw against claimed"),
            *messages_view(replay.messages),
            *handoffs,
            mo.md("### Every tool call of the episode"),
            table(
                steps,
                page_size=10,
                style_cell=_style_rows(steps, steps_style),
                wrapped_columns=["saw"],
                label="Episode steps",
            ),
        ]
    )


def access_view(task: Task, spec: ScenarioFile, mode: str, query: str) -> Html:
    """An agent-tier corpus through the access layer under disclosure `mode`: what one search
    for `query` shows the agent beside what it withheld and what the tool said of it, then what
    `open` answers for each document (hidden ones shaded)."""
    import marimo as mo

    found = access_search(task, spec, mode, query)
    corpus = corpus_access(task, spec, mode)

    def corpus_style(row: dict[str, Any], column: str) -> dict[str, Any]:
        return {} if row["visible"] else dict(_HIDDEN)

    return mo.vstack(
        [
            mo.md(f"**Search {markdown_code(query)} under `{mode}`.** {markdown_text(found.told)}"),
            mo.hstack(
                [
                    mo.vstack(
                        [
                            mo.md(f"#### Shown to the agent ({found.shown.height} hits)"),
                            table(found.shown, page_size=10, label="Search hits shown"),
                        ]
                    ),
                    mo.vstack(
                        [
                            mo.md(f"#### Withheld by the scope filter ({found.withheld.height})"),
                            table(found.withheld, page_size=10, label="Search withheld"),
                        ]
                    ),
                ],
                widths="equal",
                align="start",
            ),
            mo.md(f"#### What `open` answers for each document under `{mode}`"),
            _corpus_table(
                corpus, corpus_style, wrapped="open", label="Corpus through the access layer"
            ),
        ]
    )
