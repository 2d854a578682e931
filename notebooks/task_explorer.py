import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench task explorer")


with app.setup:
    import json
    from pathlib import Path

    import marimo as mo

    from peb_core import results, tasks
    from peb_core.access import DEFAULT_DISCLOSURE, DISCLOSURES
    from peb_core.frontends import workbench as wb

    RUNS = results.runs_root()
    families = tasks.load_families()


@app.function
def shown(title, value):
    """`value` as JSON under a Markdown title."""
    return mo.vstack([mo.md(title), mo.json(json.dumps(value))])


@app.cell
def _():
    # The task shown: picked below, or by selecting a row of the index.
    get_ref, set_ref = mo.state(
        {
            "family": next(iter(families)),
            "template": None,
            "seed": "11",
            "tier": tasks.DEFAULT_TIER,
            "contract": tasks.DEFAULT_CONTRACT,
        }
    )
    return get_ref, set_ref


@app.cell
def _():
    index_seeds = mo.ui.text(placeholder="canonical", label="Seeds (11,23 or 0-99)")
    index_tiers = mo.ui.multiselect(
        options=list(tasks.TIERS), value=list(tasks.TIERS), label="Tiers"
    )
    return index_seeds, index_tiers


@app.cell
def _(index_seeds, index_tiers):
    try:
        _selection = tasks.select_tasks(
            None,
            index_seeds.value or None,
            index_tiers.value,
            max_tasks=wb.INDEX_MAX_TASKS,
            flags={**wb.LABELS, "max_tasks": "the index's cap"},
        )
    except tasks.SelectionError as _exc:
        mo.stop(True, mo.callout(str(_exc), kind="danger"))
    index = wb.task_index(_selection)
    _choices = wb.index_choices(index)
    topology_pick = mo.ui.multiselect(options=_choices["topologies"], label="Has every topology")
    completeness_pick = mo.ui.multiselect(options=_choices["completeness"], label="Completeness")
    policy_pick = mo.ui.multiselect(options=_choices["policy"], label="Policy")
    tracker_pick = mo.ui.multiselect(options=_choices["tracker"], label="Tracker sentence")
    return completeness_pick, index, policy_pick, topology_pick, tracker_pick


@app.cell
def _(
    completeness_pick,
    index,
    index_seeds,
    index_tiers,
    policy_pick,
    set_ref,
    topology_pick,
    tracker_pick,
):
    _found = wb.filter_index(
        index,
        topologies=topology_pick.value,
        completeness=completeness_pick.value,
        policies=policy_pick.value,
        trackers=tracker_pick.value,
    )
    index_rows = mo.ui.table(
        _found,
        selection="single",
        format_mapping=wb.cell_formats(_found),
        page_size=8,
        show_column_summaries=False,
        show_data_types=False,
        on_change=lambda picked: (
            set_ref(lambda r: {**r, **wb.task_ref(picked)}) if not picked.is_empty() else None
        ),
        label=f"{_found.height} of {index.height} tasks; select one to open it below",
    )
    mo.vstack(
        [
            mo.md("# Task explorer\n## Find a task"),
            mo.hstack([index_seeds, index_tiers], justify="start"),
            mo.hstack(
                [topology_pick, completeness_pick, policy_pick, tracker_pick], justify="start"
            ),
            index_rows,
        ]
    )
    return


@app.cell
def _(get_ref, set_ref):
    _ref = get_ref()
    family_pick = mo.ui.dropdown(
        options=list(families),
        value=_ref["family"],
        label="Family",
        on_change=lambda f: set_ref(lambda r: {**r, "family": f, "template": None}),
    )
    seed_text = mo.ui.text(
        value=_ref["seed"],
        label="Seed (any integer >= 0)",
        on_change=lambda s: set_ref(lambda r: {**r, "seed": s}),
    )
    tier_pick = mo.ui.dropdown(
        options=list(tasks.TIERS),
        value=_ref["tier"],
        label="Tier",
        on_change=lambda t: set_ref(lambda r: {**r, "tier": t}),
    )
    # Where an agent's contract comes from (`--contract`; tiers with corpora only).
    contract_pick = mo.ui.dropdown(
        options=list(tasks.CONTRACT_SOURCES),
        value=_ref["contract"],
        label="Contract",
        on_change=lambda c: set_ref(lambda r: {**r, "contract": c}),
    )
    return contract_pick, family_pick, seed_text, tier_pick


@app.cell
def _(family_pick, get_ref, set_ref):
    # Kept when the seed or the tier changes; the family's first when the family does.
    _templates = [t.id for t in families[family_pick.value].templates]
    _asked = get_ref()["template"]
    template_pick = mo.ui.dropdown(
        options=_templates,
        value=_asked if _asked in _templates else _templates[0],
        label="Template",
        on_change=lambda t: set_ref(lambda r: {**r, "template": t}),
    )
    return (template_pick,)


@app.cell
def _(contract_pick, family_pick, seed_text, template_pick, tier_pick):
    _corpus = tasks.TIERS[tier_pick.value].corpus
    _header = mo.hstack(
        [family_pick, template_pick, seed_text, tier_pick, *([contract_pick] if _corpus else [])],
        justify="start",
    )
    try:
        _seed = tasks.parse_seed(seed_text.value)
    except ValueError as _exc:
        mo.stop(True, mo.vstack([_header, mo.callout(str(_exc), kind="danger")]))
    spec = families[family_pick.value]
    task = wb.explored_task(spec, template_pick.value, _seed, tier_pick.value, contract_pick.value)
    mo.vstack([mo.md("## The task"), _header])
    return spec, task


@app.cell
def _(spec, task):
    mo.vstack(
        [
            mo.md(
                f"### `{task.task_id}` ({task.family}, {task.tier} tier)\n{task.prompt}\n\n"
                f"Completeness `{task.oracles.completeness}`, policy "
                f"`{wb.POLICIES[task.contract.partial_response_permitted]}`, user scopes "
                f"`{', '.join(task.user_scopes)}`, evidence topologies "
                f"`{', '.join(task.topologies) or '-'}`; the tracker's boundary sentence is "
                "marked with what it is worth (signal, decoy, or none). " + wb.contract_note(task)
            ),
            wb.task_documents_view(
                task, spec, titles=("Visible (authorized)", "Hidden (outside the view)")
            ),
        ]
    )
    return


@app.cell
def _(task):
    # A corpus (the agent tier): what the access layer's tools show an agent of it.
    mo.stop(not wb.has_corpus(task))
    access_mode = mo.ui.dropdown(
        options=list(DISCLOSURES), value=DEFAULT_DISCLOSURE, label="Disclosure mode"
    )
    access_query = mo.ui.text(value=wb.default_query(task), label="Search query", full_width=True)
    return access_mode, access_query


@app.cell
def _(access_mode, access_query, spec, task):
    mo.vstack(
        [
            mo.md(
                "## The access layer's view: what the tools show an agent\n"
                "Pick a disclosure mode and type a query: the hits `search` returns, the "
                "documents the user's scopes withheld from it (never shown) and what the mode "
                "tells the agent of them; then what `open` answers for each document. "
                + "; ".join(f"`{d.name}`: {d.description}" for d in DISCLOSURES.values())
                + "."
            ),
            mo.hstack([access_mode, access_query], justify="start", widths=[1, 4]),
            wb.access_view(task, spec, access_mode.value, access_query.value),
        ]
    )
    return


@app.cell
def _(task):
    _o = task.oracles

    mo.vstack(
        [
            mo.md("## Contract"),
            wb.table(wb.contract_frame(task)),
            mo.md("## Oracles"),
            mo.hstack(
                [
                    shown("**complete answer**", _o.complete_answer),
                    shown("**authorized answer**", _o.authorized_answer),
                    shown(
                        f"**completeness** `{_o.completeness}`; **gap report**",
                        _o.gap_report.model_dump() if _o.gap_report else None,
                    ),
                ],
                widths="equal",
                align="start",
            ),
        ]
    )
    return


@app.cell
def _():
    pasted_reply = mo.ui.text_area(
        placeholder="A reply to this task: a response's JSON object, or prose",
        label="Paste a reply",
        full_width=True,
        rows=5,
    )
    return (pasted_reply,)


@app.cell
def _(pasted_reply, spec, task):
    # Read as `peb read FILE --family F --task ID` reads it: JSON by the reply reader, prose by
    # the prose reader, the words it read marked.
    _head = mo.vstack(
        [
            mo.md(
                "## Read a reply\nPaste a model's reply to this task: it is read as scoring "
                f"reads it, as `peb read FILE --family {task.family} --task {task.task_id}` "
                "prints it (its answer, completeness claim and gaps named)."
            ),
            pasted_reply,
        ]
    )
    mo.stop(not pasted_reply.value.strip(), _head)
    mo.vstack([_head, wb.pasted_view(wb.read_pasted(pasted_reply.value, spec, task))])
    return


@app.cell
def _(task):
    _responses = results.responses_to_task(RUNS, task.task_id, task.family)
    reply_rows = mo.ui.table(
        _responses,
        selection="single",
        show_column_summaries=False,
        show_data_types=False,
        format_mapping=wb.cell_formats(_responses),
        hidden_columns=["path"],
        label="Select a reply to read it against the oracles",
    )
    mo.vstack(
        [
            mo.md(f"## Stored replies to this task (runs under `{RUNS}`)"),
            reply_rows
            if _responses.height
            else mo.md("_No stored run covers this task (fresh seeds are not run yet)._"),
        ]
    )
    return (reply_rows,)


@app.cell
def _(reply_rows, task):
    _found = wb.picked_row(reply_rows.value, reply_rows.data)
    mo.stop(_found is None)
    _row, _picked = _found
    # The task as that run made it (its own distractors), and its reply.
    _example = wb.run_example(Path(_row["path"]), _row["run"], task.family, task.task_id)
    reply_replay = wb.episode_replay(_example)
    # The view is the cell's last expression: marimo shows only that.
    wb.example_view(
        _example,
        f"### {wb.markdown_code(_row['system'])} (run {wb.markdown_code(_row['run'])}): the "
        "reply against the oracles",
        note="" if _picked else "The first stored reply; select a row.",
        skip=("documents",),
    )
    return (reply_replay,)


@app.cell
def _(reply_replay):
    mo.stop(reply_replay is None)
    get_reply_step, set_reply_step = mo.state(1)
    return get_reply_step, set_reply_step


@app.cell
def _(reply_replay, set_reply_step):
    # In a cell of their own: a press re-runs the slider's cell, which reads the step.
    reply_jumps = wb.jump_buttons(reply_replay, set_reply_step)
    return (reply_jumps,)


@app.cell
def _(get_reply_step, reply_replay, set_reply_step):
    reply_step = wb.step_slider(reply_replay, get_reply_step(), set_reply_step)
    return (reply_step,)


@app.cell
def _(reply_jumps, reply_replay, reply_step):
    wb.replay_view(reply_replay, reply_step.value, reply_step, reply_jumps)
    return


@app.cell
def _(spec, tier_pick):
    # The shortcut audit of the selected family and tier (docs/benchmark.md §8), on small seed
    # sets so that it answers in seconds; `peb audit shortcuts` runs it at full size.
    from peb_core import audit as _audit

    try:
        _found = _audit.audit_shortcuts(
            [spec], [tier_pick.value], range(1_000, 1_100), range(2_000, 2_050)
        )
    except _audit.AuditUnavailable as _exc:
        mo.stop(True, mo.callout(str(_exc), kind="warn"))
    _ngrams = _audit.ngram_table(_found.ngrams)
    mo.vstack(
        [
            mo.md(
                "## Shortcut audit: what a text classifier learns of completeness from this "
                "family's views (600 training and 300 held-out tasks)"
            ),
            wb.table(_audit.summary_table(_found.summary)),
            wb.table(_ngrams, wrapped_columns=_ngrams.columns[-1:]),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
