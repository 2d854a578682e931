import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench workbench")


@app.cell
def _():
    import sys
    import time

    import marimo as mo

    from peb_core import results, runs, scoring, tasks
    from peb_core.access import DEFAULT_DISCLOSURE, DISCLOSURES
    from peb_core.frontends import workbench as wb
    from peb_core.systems import (
        BASELINES,
        DEFAULT_PROTOCOL,
        PROTOCOLS,
        REGISTRY,
        get_local,
        local_status,
        stop_local,
    )

    RUNS = results.runs_root()
    LAUNCH_ROOT = RUNS / results.SCRATCH
    families = tasks.load_families()
    SYSTEMS = [
        *BASELINES,
        *(f"local/{name}" for name in REGISTRY),
        *(f"agent:local/{name}" for name in REGISTRY),
    ]
    LOCAL_MODELS = [get_local(f"local/{name}") for name in REGISTRY]
    return (
        DEFAULT_DISCLOSURE,
        DEFAULT_PROTOCOL,
        DISCLOSURES,
        LAUNCH_ROOT,
        LOCAL_MODELS,
        PROTOCOLS,
        RUNS,
        SYSTEMS,
        families,
        local_status,
        mo,
        runs,
        scoring,
        stop_local,
        sys,
        tasks,
        time,
        wb,
    )


@app.cell
def _(RUNS, mo, sys, wb):
    # Headless, as the Run button: `python notebooks/workbench.py -- --run SYSTEMS [--family F]
    # [--seeds LIST] [--tier T] [--protocol P] [--api-base URL] [--name N] [--limit N]
    # [--max-tasks N] [--disclosure D] [--max-steps N] [--corpus-size N] [--out DIR]`; one line
    # and exit 2 on bad input, exit 1 if a run ended badly.
    _argv = sys.argv[1:]
    if mo.app_meta().mode == "script" and _argv:
        sys.exit(wb.headless(_argv[1:] if _argv[0] == "--" else _argv, RUNS))
    return


@app.cell
def _(RUNS, mo, time, wb):
    get_runs_version, set_runs_version = mo.state(0)
    get_scored, set_scored = mo.state((wb.runs_stamp(RUNS), time.monotonic()))
    get_picks, set_picks = mo.state(None)
    get_task_key, set_task_key = mo.state(None)
    return (
        get_picks,
        get_runs_version,
        get_scored,
        get_task_key,
        set_picks,
        set_runs_version,
        set_scored,
        set_task_key,
    )


@app.cell
def _(DEFAULT_DISCLOSURE, DEFAULT_PROTOCOL, DISCLOSURES, PROTOCOLS, SYSTEMS, families, mo, tasks):
    family_pick = mo.ui.multiselect(options=list(families), value=list(families), label="Families")
    seeds_text = mo.ui.text(placeholder="canonical", label="Seeds (11,23 or 400-439)")
    tier_pick = mo.ui.dropdown(options=list(tasks.TIERS), value=tasks.DEFAULT_TIER, label="Tier")
    protocol_pick = mo.ui.dropdown(
        options=list(PROTOCOLS), value=DEFAULT_PROTOCOL, label="Protocol"
    )
    system_pick = mo.ui.multiselect(options=SYSTEMS, value=["fail_and_report"], label="Systems")
    model_text = mo.ui.text(placeholder="openai/gpt-4o-mini", label="litellm model strings")
    disclosure_pick = mo.ui.dropdown(
        options=list(DISCLOSURES), value=DEFAULT_DISCLOSURE, label="Disclosure"
    )
    max_steps_text = mo.ui.text(placeholder="24", label="Max steps")
    corpus_size_text = mo.ui.text(placeholder="tier default", label="Corpus size")
    api_base = mo.ui.text(placeholder="http://HOST/v1", label="API base")
    name_text = mo.ui.text(placeholder="automatic", label="Run name")
    limit_text = mo.ui.text(placeholder="every task", label="Task limit")
    repeats_text = mo.ui.text(placeholder="1", label="Repeats (1-100)")
    no_cache_switch = mo.ui.switch(label="No cache")
    run_button = mo.ui.run_button(label="Run selected systems", kind="success")
    stop_button = mo.ui.run_button(label="Stop", kind="danger")
    _tiers = "; ".join(f"`{t.name}`: {t.description}" for t in tasks.TIERS.values())
    _modes = "; ".join(f"`{d.name}`: {d.description}" for d in DISCLOSURES.values())
    mo.vstack(
        [
            mo.md(
                "# partial-evidence-bench workbench\n"
                "## Run\nRuns started here are saved under `scratch/` in the runs root (kept "
                "out of `peb report` unless picked) and resumed when asked for again: Run again "
                "retries tasks that ended in error. Model replies are cached; the protocol is "
                f"the prompt models are given. Tiers: {_tiers}.  \n"
                "Agents (the `agent_*` baselines, `agent:<model>`) search, open and submit "
                "through the access layer's tools; the disclosure mode is what it tells them of "
                f"what it withheld ({_modes}). Max steps (model requests per episode) applies "
                "to `agent:<model>` only; corpus size to tiers with corpora. Repeats answers "
                "each task K times (the scorecard then adds unsafe_any@K and consistent@K); "
                "No cache neither reads nor writes the model reply cache."
            ),
            mo.hstack(
                [family_pick, tier_pick, seeds_text, corpus_size_text], justify="start", wrap=True
            ),
            mo.hstack(
                [system_pick, model_text, api_base, protocol_pick], justify="start", wrap=True
            ),
            mo.hstack(
                [disclosure_pick, max_steps_text, repeats_text, no_cache_switch],
                justify="start",
                wrap=True,
            ),
            mo.hstack([name_text, limit_text, run_button, stop_button], justify="start", wrap=True),
        ]
    )
    return (
        api_base,
        corpus_size_text,
        disclosure_pick,
        family_pick,
        limit_text,
        max_steps_text,
        model_text,
        name_text,
        no_cache_switch,
        protocol_pick,
        repeats_text,
        run_button,
        seeds_text,
        stop_button,
        system_pick,
        tier_pick,
    )


@app.cell
def _(
    LAUNCH_ROOT,
    api_base,
    corpus_size_text,
    disclosure_pick,
    family_pick,
    limit_text,
    max_steps_text,
    mo,
    model_text,
    name_text,
    no_cache_switch,
    protocol_pick,
    repeats_text,
    run_button,
    seeds_text,
    system_pick,
    tier_pick,
    wb,
):
    mo.stop(not run_button.value)
    _form = wb.RunForm(
        systems=[*system_pick.value, model_text.value],
        families=family_pick.value,
        seeds=seeds_text.value,
        tier=tier_pick.value,
        protocol=protocol_pick.value,
        api_base=api_base.value,
        name=name_text.value,
        limit=limit_text.value,
        disclosure=disclosure_pick.value,
        max_steps=max_steps_text.value,
        corpus_size=corpus_size_text.value,
        repeats=repeats_text.value,
        no_cache=no_cache_switch.value,
    )
    try:
        _launch = wb.check_run(_form, LAUNCH_ROOT)
    except wb.LaunchError as _exc:
        mo.stop(
            True,
            mo.callout(mo.md("Nothing was run.  \n" + "  \n".join(_exc.problems)), kind="danger"),
        )
    _job = wb.start_launch(_launch)
    mo.callout(mo.md(wb.launch_note(_launch, _job, LAUNCH_ROOT)), kind="info")
    return


@app.cell
def _(mo):
    ticker = mo.ui.refresh(default_interval="1s", label="Progress refresh")
    server_stop = mo.ui.run_button(label="Stop the embedded model servers", kind="danger")
    return server_stop, ticker


@app.cell
def _(
    RUNS,
    get_runs_version,
    get_scored,
    mo,
    runs,
    set_runs_version,
    set_scored,
    stop_button,
    ticker,
    time,
    wb,
):
    ticker.value  # noqa: B018  (re-run every second)
    _jobs = runs.run_jobs()
    if stop_button.value:
        for _job in _jobs:
            _job.stop()
    # Rescore when a run appears, ends or is imported, and every few seconds while one records.
    _stamp, _now = wb.runs_stamp(RUNS), time.monotonic()
    if wb.rescore_due(_stamp, *get_scored(), _now):
        set_scored((_stamp, _now))
        set_runs_version(get_runs_version() + 1)
    _lines = wb.run_lines(_jobs, lambda d: wb.run_label(d, RUNS))
    # The ticker must be on the page for it to tick.
    mo.vstack(
        [
            mo.Html(f"<div style='display: none'>{ticker}</div>"),
            wb.status_table(_lines) if _lines else mo.md(""),
        ]
    )
    return


@app.cell
def _(LOCAL_MODELS, local_status, mo, server_stop, stop_local, ticker):
    ticker.value  # noqa: B018  (re-checked every second)
    if server_stop.value:
        for _model in LOCAL_MODELS:
            stop_local(_model)
    _serving = [(m, local_status(m)) for m in LOCAL_MODELS]
    _serving = [(m, s) for m, s in _serving if s is not None]
    mo.stop(not _serving)
    mo.callout(
        mo.vstack(
            [
                mo.md(
                    "Embedded model servers still serving (they outlive this page and the "
                    "workbench until stopped): "
                    + ", ".join(
                        f"`local/{m.name}` on port {port} (pid {pid})"
                        for m, (pid, port) in _serving
                    )
                ),
                server_stop,
            ]
        ),
        kind="warn",
    )
    return


@app.cell
def _(families, mo, tasks):
    # What the tables show; made once, so they stay as picked when runs appear.
    view_families = mo.ui.multiselect(
        options=list(families), value=list(families), label="Families shown"
    )
    view_tiers = mo.ui.multiselect(
        options=list(tasks.TIERS), value=list(tasks.TIERS), label="Tiers shown"
    )
    return view_families, view_tiers


@app.cell
def _(RUNS, get_picks, get_runs_version, mo, set_picks, view_families, view_tiers, wb):
    get_runs_version()
    run_options = wb.run_options(RUNS)
    _options = list(run_options)
    _known, _picked = get_picks() or (_options, _options)
    run_pick = mo.ui.multiselect(
        options=_options,
        value=wb.keep_picks(_options, _known, _picked),
        label="Runs",
        on_change=lambda picked: set_picks((_options, list(picked))),
    )
    mo.vstack(
        [
            mo.md(
                f"## Results\nThe runs under `{RUNS}`: a run written here, by `peb run` or by "
                "`peb import` appears as soon as it is on disk. The families and tiers shown "
                "filter the tables below, not what Run runs."
            ),
            run_pick,
            mo.hstack([view_families, view_tiers], justify="start", wrap=True),
        ]
    )
    return run_options, run_pick


@app.cell
def _(run_options, run_pick, wb):
    # Scored once per choice of runs (each run's scores are saved beside it); the families and
    # tiers shown only filter these rows.
    scores, warnings = wb.score_runs(run_options, run_pick.value)
    return scores, warnings


@app.cell
def _(mo, run_options, scores, scoring, view_families, view_tiers, warnings, wb):
    mo.stop(scores is None, mo.callout("No runs selected (or none on disk yet).", kind="info"))
    view = scoring.filter_scores(scores, families=view_families.value, tiers=view_tiers.value)
    card = scoring.scorecard(view)
    _notes = wb.unfinished_notes(card, run_options)
    mo.vstack(
        [
            mo.md(
                f"### Scorecard\nScorecard: {card.height} rows; "
                f"{scoring.scored_counts(view).text}. Each rate and mean with its 95% "
                "interval. `unsafe` is the headline; `unsafe_max` counts unreadable replies, "
                "errors and missing records as unsafe; `format` is the share of "
                "format-compliant replies. Only rows whose `status` is `ok` are finished "
                "numbers; the others show `—`. When a run has repeats (K > 1), `repeats` "
                "shows its K, and `unsafe_any@K` and `consistent@K` what its repeats did.  \n"
                + "  \n".join(f"_{n}_" for n in scoring.notes(scoring.SCREEN))
            ),
            mo.callout(
                mo.md(
                    "Runs with rows that are not finished numbers (left out of the charts):  \n"
                    + "  \n".join(_notes)
                ),
                kind="danger",
            )
            if _notes
            else mo.md(""),
            wb.scorecard_table(card),
            *(mo.callout(w, kind="warn") for w in warnings[:3]),
            mo.md(f"_and {len(warnings) - 3} more warnings_") if len(warnings) > 3 else mo.md(""),
        ]
    )
    return card, view


@app.cell
def _(card, mo, view, wb):
    # altair is imported here, after the scorecard cell has run, not before it.
    from peb_core.reporting import charts as _charts

    _done, _charted = wb.finished(card, view)
    mo.stop(_charted.is_empty(), mo.md("_No finished run to chart._"))
    mo.vstack(
        [
            mo.md("### Completeness: true against claimed"),
            _charts.confusion_heatmap(_charted),
            mo.md(
                "### Operating profile\nUnsafe completeness against over-blocking; "
                "the bigger the mark, the better the answers."
            ),
            _charts.operating_profile(_done),
        ]
    )
    return


@app.cell
def _(get_task_key, mo, scoring, set_task_key, view, wb):
    _tasks = wb.task_rows(view)
    task_rows = mo.ui.table(
        _tasks,
        format_mapping=scoring.float_formats(_tasks),
        selection="single",
        initial_selection=wb.row_position(_tasks, get_task_key()),
        on_change=lambda picked: set_task_key(wb.row_key(picked)),
        page_size=10,
        show_column_summaries=False,
        show_data_types=False,
        freeze_columns_left=["run"],
        label="Per task: select a row for its worked example",
    )
    mo.vstack([mo.md("### Per task"), task_rows])
    return (task_rows,)


@app.cell
def _(mo, run_options, task_rows, wb):
    _found = wb.picked_row(task_rows.value, task_rows.data)
    mo.stop(_found is None)
    _row, _picked = _found
    _repeat = _row.get("repeat", 0)
    example = wb.run_example(
        run_options[_row["run"]], _row["run"], _row["family"], _row["task_id"], _repeat
    )
    replay = wb.episode_replay(example)
    # An agent's episode shows its corpus in the replay below, step by step.
    wb.example_view(
        example,
        f"## Worked example: `{_row['task_id']}` answered by `{example.system}` "
        f"(run `{_row['run']}`" + (f", repeat {_repeat})" if "repeat" in _row else ")"),
        note="" if _picked else "The first task of the table; select a row.",
        skip=("documents",) if replay is not None else (),
    )
    return (replay,)


@app.cell
def _(mo, replay, wb):
    mo.stop(replay is None)
    step_pick = mo.ui.slider(
        start=1,
        stop=replay.n_steps,
        value=1,
        label=wb.step_label(replay),
        show_value=True,
        full_width=True,
    )
    return (step_pick,)


@app.cell
def _(replay, step_pick, wb):
    wb.replay_view(replay, step_pick.value, step_pick)
    return


if __name__ == "__main__":
    app.run()
