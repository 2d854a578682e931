import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench task explorer")


@app.cell
def _():
    import json
    from pathlib import Path

    import marimo as mo
    import polars as pl

    from peb_core import results, scoring, tasks

    RUNS = results.runs_root()
    families = tasks.load_families()
    return Path, RUNS, families, json, mo, pl, results, scoring, tasks


@app.cell
def _(families, mo, tasks):
    family_pick = mo.ui.dropdown(options=list(families), value=next(iter(families)), label="Family")
    tier_pick = mo.ui.dropdown(options=list(tasks.TIERS), value="paper", label="Tier")
    seed_text = mo.ui.text(value="11", label="Seed (any integer >= 0 is a task)")
    return family_pick, seed_text, tier_pick


@app.cell
def _(families, family_pick, mo, seed_text, tier_pick):
    _templates = [t.id for t in families[family_pick.value].templates]
    template_pick = mo.ui.dropdown(options=_templates, value=_templates[0], label="Template")
    mo.vstack(
        [
            mo.md("# Task explorer"),
            mo.hstack([family_pick, template_pick, seed_text, tier_pick], justify="start"),
        ]
    )
    return (template_pick,)


@app.cell
def _(families, family_pick, mo, seed_text, tasks, template_pick, tier_pick):
    try:
        _seed = tasks.parse_seed(seed_text.value)
    except ValueError as _exc:
        mo.stop(True, mo.callout(str(_exc), kind="danger"))
    spec = families[family_pick.value]
    task = tasks.generate_task(spec, template_pick.value, _seed, tier=tier_pick.value)
    docs = tasks.documents_frame(task, spec)
    return docs, spec, task


@app.cell
def _(docs, mo, task, tasks):
    def _cards(visible):
        cards = tasks.document_cards(docs, visible=visible)
        return [
            mo.callout(mo.md(c.markdown), kind="warn") if c.boundary_signal else mo.md(c.markdown)
            for c in cards
        ] or [mo.md("_(none)_")]

    mo.vstack(
        [
            mo.md(
                f"## `{task.task_id}` ({task.family}, {task.tier} tier)\n{task.prompt}\n\n"
                f"Completeness `{task.oracles.completeness}`, partial answer permitted "
                f"`{task.contract.partial_response_permitted}`, user scopes "
                f"`{', '.join(task.user_scopes)}`, evidence topologies "
                f"`{', '.join(task.topologies) or '-'}`; the tracker's boundary sentence is "
                "marked."
            ),
            mo.hstack(
                [
                    mo.vstack([mo.md("### Visible (authorized)"), *_cards(True)]),
                    mo.vstack([mo.md("### Hidden (outside the view)"), *_cards(False)]),
                ],
                widths="equal",
                align="start",
            ),
        ]
    )
    return


@app.cell
def _(json, mo, pl, task):
    _contract = pl.DataFrame(
        [
            {"requirement": r.id, "description": r.description, "informs": ", ".join(r.informs)}
            for r in task.contract.required_evidence
        ]
    )
    _o = task.oracles
    mo.vstack(
        [
            mo.md("## Contract"),
            mo.ui.table(_contract, selection=None, show_column_summaries=False),
            mo.md("## Oracles"),
            mo.hstack(
                [
                    mo.vstack(
                        [mo.md("**complete answer**"), mo.json(json.dumps(_o.complete_answer))]
                    ),
                    mo.vstack(
                        [mo.md("**authorized answer**"), mo.json(json.dumps(_o.authorized_answer))]
                    ),
                    mo.vstack(
                        [
                            mo.md(f"**completeness** `{_o.completeness}`; **gap report**"),
                            mo.json(_o.gap_report.model_dump_json() if _o.gap_report else "null"),
                        ]
                    ),
                ],
                widths="equal",
                align="start",
            ),
        ]
    )
    return


@app.cell
def _(RUNS, mo, results, scoring, task):
    _responses = results.responses_to_task(RUNS, task.task_id, task.family)
    reply_rows = mo.ui.table(
        _responses,
        selection="single",
        show_column_summaries=False,
        format_mapping=scoring.float_formats(_responses),
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
def _(Path, mo, reply_rows, results, scoring, spec, task):
    _picked = reply_rows.value is not None and not reply_rows.value.is_empty()
    _rows = reply_rows.value if _picked else reply_rows.data
    mo.stop(_rows.is_empty())
    _row = _rows.row(0, named=True)
    _record = results.run_record(Path(_row["path"]), task.family, task.task_id)
    _shown = scoring.explain(task, _record, spec, run=_row["run"], system=_row["system"])
    _target, _ = scoring.answer_target(task)
    mo.vstack(
        [
            mo.md(
                f"### `{_row['system']}` (run `{_row['run']}`): the answer field by field\n"
                f"The response is scored against `{_target}` (`expected`)."
                + ("" if _picked else "  \n_The first stored reply; select a row._")
            ),
            mo.ui.table(
                _shown.fields,
                selection=None,
                show_column_summaries=False,
                format_mapping=scoring.float_formats(_shown.fields),
                wrapped_columns=["complete_answer", "authorized_answer", "expected", "response"],
            ),
            mo.md("### The reply (pretty-printed if it is JSON)"),
            mo.md(scoring.reply_markdown(_record.raw if _record is not None else None)),
        ]
    )
    return


@app.cell
def _(mo, spec, tier_pick):
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
            mo.ui.table(
                _audit.summary_table(_found.summary),
                selection=None,
                show_column_summaries=False,
            ),
            mo.ui.table(
                _ngrams,
                selection=None,
                show_column_summaries=False,
                wrapped_columns=_ngrams.columns[-1:],
            ),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
