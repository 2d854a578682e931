import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench workbench")


with app.setup:
    import sys
    import time

    import marimo as mo

    from peb_core import results, runs, scoring, tasks
    from peb_core.frontends import workbench as wb
    from peb_core.systems import local_servers, local_status, status_line, stop_local

    RUNS = results.runs_root()
    LAUNCH_ROOT = RUNS / results.SCRATCH
    families = tasks.load_families()
    LOCAL_SERVERS = local_servers()


@app.cell
def _():
    # Headless, as the Run button: `python notebooks/workbench.py -- --run SYSTEMS [--name N]
    # [--out DIR]` and every run option the form offers, as `peb run` takes it (`-- --help`);
    # one line and exit 2 on bad input, exit 1 if a run ended badly.
    _argv = sys.argv[1:]
    if mo.app_meta().mode == "script" and _argv:
        sys.exit(wb.headless(_argv[1:] if _argv[0] == "--" else _argv, RUNS))
    return


@app.cell
def _():
    get_runs_version, set_runs_version = mo.state(0)
    get_scored, set_scored = mo.state((wb.runs_stamp(RUNS), time.monotonic()))
    # The page opens on the newest runs and their tier: (runs known, runs picked, tiers shown).
    _options = wb.run_options(RUNS)
    _opening = wb.newest_runs(_options)
    get_picks, set_picks = mo.state((list(_options), _opening, wb.run_tiers(_options, _opening)))
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
def _():
    run_form = wb.run_form()
    run_button = mo.ui.run_button(label="Run selected systems", kind="success")
    stop_button = mo.ui.run_button(label="Stop", kind="danger")
    _tiers = "; ".join(f"`{t.name}`: {t.description}" for t in tasks.TIERS.values())
    mo.vstack(
        [
            mo.md(
                "# partial-evidence-bench workbench\n"
                "## Run\nRuns started here are saved under `scratch/` in the runs root (kept "
                "out of `peb report` unless picked) and resumed when asked for again: Run again "
                "retries tasks that ended in error. Model replies are cached. Agents (the "
                "`agent_*` baselines, `agent:<model>`) search, open and submit through the "
                f"access layer's tools. Tiers: {_tiers}."
            ),
            mo.hstack(list(run_form.elements.values()), justify="start", wrap=True),
            mo.hstack([run_button, stop_button], justify="start"),
            mo.accordion({"What each input does": mo.md(wb.form_help())}),
        ]
    )
    return run_button, run_form, stop_button


@app.cell
def _(run_button, run_form):
    mo.stop(not run_button.value)
    try:
        _launch = wb.check_run(wb.form_request(run_form.value), LAUNCH_ROOT)
    except wb.LaunchError as _exc:
        mo.stop(
            True,
            mo.callout(mo.md("Nothing was run.  \n" + "  \n".join(_exc.problems)), kind="danger"),
        )
    _job = wb.start_launch(_launch)
    mo.callout(mo.md(wb.launch_note(_launch, _job, LAUNCH_ROOT)), kind="info")
    return


@app.cell
def _():
    ticker = mo.ui.refresh(default_interval="1s", label="Progress refresh")
    server_stop = mo.ui.run_button(label="Stop the embedded model servers", kind="danger")
    return server_stop, ticker


@app.cell
def _(get_runs_version, get_scored, set_runs_version, set_scored, stop_button, ticker):
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
def _(server_stop, ticker):
    ticker.value  # noqa: B018  (re-checked every second)
    if server_stop.value:
        for _server in LOCAL_SERVERS:
            stop_local(_server)
    _serving = [s for s in LOCAL_SERVERS if local_status(s) is not None]
    mo.stop(not _serving)
    mo.callout(
        mo.vstack(
            [
                mo.md(
                    "Embedded model servers serving (one a run started stops when the last "
                    "run holding it ends; one started by `peb local-model serve` serves until "
                    "stopped):  \n" + "  \n".join(f"`{status_line(s)}`" for s in _serving)
                ),
                server_stop,
            ]
        ),
        kind="warn",
    )
    return


@app.cell
def _():
    # What the tables show; made once, so it stays as picked when runs appear.
    view_families = mo.ui.multiselect(
        options=list(families), value=list(families), label="Families shown"
    )
    return (view_families,)


@app.cell
def _(get_picks, get_runs_version, set_picks):
    get_runs_version()
    run_options = wb.run_options(RUNS)
    _options = list(run_options)
    # What was picked, and every run new since picked too.
    _known, _picked, _tiers = get_picks()
    _now = wb.keep_picks(_options, _known, _picked)
    _shown = wb.shown_tiers(run_options, _known, _tiers)
    run_pick = mo.ui.multiselect(
        options=_options,
        value=_now,
        label="Runs",
        # A run picked of a tier not shown brings its tier into view.
        on_change=lambda picked: set_picks(
            (_options, list(picked), wb.tiers_on_pick(run_options, _now, list(picked), _shown))
        ),
    )
    return run_options, run_pick


@app.cell
def _(get_picks, run_options, run_pick, set_picks, view_families):
    # In a cell of its own, so that picking runs (which sets the picks) shows their tiers here.
    _known, _, _tiers = get_picks()
    view_tiers = mo.ui.multiselect(
        options=list(tasks.TIERS),
        value=wb.shown_tiers(run_options, _known, _tiers),
        label="Tiers shown",
        on_change=lambda tiers: set_picks((list(run_options), run_pick.value, list(tiers))),
    )
    mo.vstack(
        [
            mo.md(
                f"## Results\nThe runs under `{RUNS}`: a run written here, by `peb run` or by "
                "`peb import` appears as soon as it is on disk, picked, its tier shown; a run "
                "picked brings its tier into view. The page opens on the newest runs (up to "
                f"{wb.NEWEST_RUNS}) of the newest run's tier. The families and tiers shown "
                "filter the tables below, not what Run runs."
            ),
            run_pick,
            mo.hstack([view_families, view_tiers], justify="start", wrap=True),
        ]
    )
    return (view_tiers,)


@app.cell
def _(run_options, run_pick):
    # Scored once per choice of runs (each run's scores are saved beside it); the families and
    # tiers shown only filter these rows. A run that cannot be read is left out, saying why.
    picked_scores = wb.score_runs(run_options, run_pick.value)
    scores, warnings = picked_scores.scores, picked_scores.warnings
    _left_out = picked_scores.left_out
    mo.callout(
        mo.md("Left out of the tables below:  \n" + "  \n".join(_left_out)), kind="danger"
    ) if _left_out else mo.md("")
    return scores, warnings


@app.cell
def _(run_options, scores, view_families, view_tiers, warnings):
    mo.stop(scores is None, mo.callout("No runs selected (or none on disk yet).", kind="info"))
    view = scoring.filter_scores(scores, families=view_families.value, tiers=view_tiers.value)
    _hidden = wb.hidden_note(scores, view_families.value, view_tiers.value)
    mo.stop(_hidden is not None, mo.callout(mo.md(_hidden or ""), kind="warn"))
    card = scoring.scorecard(view)
    _shown = scoring.with_pooled(card, view)
    _notes = wb.unfinished_notes(card, run_options)
    mo.vstack(
        [
            mo.md(
                f"### Scorecard\nScorecard: {card.height} rows, and "
                f"{_shown.height - card.height} pooled over a run's families (family "
                f"`{scoring.POOLED}`, first); {scoring.scored_counts(view).text}. Each rate "
                "and mean with its 95% interval. `unsafe` is the headline; `unsafe_max` "
                "counts unreadable replies, errors and missing records as unsafe; `format` is "
                "the share of "
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
            wb.scorecard_table(_shown),
            *(mo.callout(w, kind="warn") for w in warnings[:3]),
            mo.md(f"_and {len(warnings) - 3} more warnings_") if len(warnings) > 3 else mo.md(""),
        ]
    )
    return card, view


@app.cell
def _(card, view):
    # altair is imported here, after the scorecard cell has run, not before it.
    from peb_core.reporting import charts as _charts

    _done, _charted = wb.finished(card, view)
    mo.stop(_charted.is_empty(), mo.md("_No finished run to chart._"))
    mo.vstack(
        [
            mo.md("### Completeness: true against claimed"),
            _charts.confusion_heatmap(_charted),
            mo.md(
                "### Operating profile\nUnsafe completeness against over-blocking; bottom "
                "left is safe and useful. A mark's size is not a score: up to three series at "
                "one value are nested rings, more are one grey mark and the chart's subtitle "
                "names them."
            ),
            _charts.operating_profile(_done),
            *(
                [
                    mo.md(
                        "### Stated confidence\nWhere a run states how likely its evidence is "
                        "complete (`structured_gap@2`): each bin of confidence against how often "
                        "the evidence was; on the diagonal it is calibrated."
                    ),
                    _charts.reliability_diagram(_charted),
                ]
                if _charted["asks_confidence"].any()
                else []
            ),
        ]
    )
    return


@app.cell
def _(card):
    # Paired tests of the runs shown, computed when asked (a sign-flip test per metric).
    _runs = card["run"].unique(maintain_order=True).to_list()
    mo.stop(len(_runs) < 2)
    compare_reference = mo.ui.dropdown(options=_runs, value=_runs[0], label="Reference run")
    compare_button = mo.ui.run_button(label="Compare the runs shown")
    mo.vstack(
        [
            mo.md(
                "### Compare the runs shown\nEach run against a reference, task by task, per "
                "family and pooled (`all`), over the families and tiers shown. "
                "`notebooks/compare.py` adds the task x run grid and the tasks where they "
                "disagree; it opens on the same newest runs."
            ),
            mo.hstack([compare_reference, compare_button], justify="start"),
        ]
    )
    return compare_button, compare_reference


@app.cell
def _(compare_button, compare_reference, view):
    mo.stop(not compare_button.value)
    mo.vstack(
        [
            mo.md(
                f"Paired tests against {wb.markdown_code(compare_reference.value)} (A), each "
                "other run B. " + scoring.COMPARE_NOTE
            ),
            wb.table(
                wb.paired_tests(view, compare_reference.value),
                page_size=20,
                label="Paired tests of the runs shown",
            ),
        ]
    )
    return


@app.cell
def _(get_task_key, set_task_key, view):
    _tasks = wb.task_rows(view)
    task_rows = mo.ui.table(
        _tasks,
        format_mapping=wb.cell_formats(_tasks),
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
def _(run_options, task_rows):
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
        f"## Worked example: {wb.markdown_code(_row['task_id'])} answered by "
        f"{wb.markdown_code(example.system)} (run {wb.markdown_code(_row['run'])}"
        + (f", repeat {_repeat})" if "repeat" in _row else ")"),
        note="" if _picked else "The first task of the table; select a row.",
        skip=("documents",) if replay is not None else (),
    )
    return (replay,)


@app.cell
def _(replay):
    # The step shown: moved by the slider, or by a button that jumps to a finding or a mark.
    mo.stop(replay is None)
    get_step, set_step = mo.state(1)
    return get_step, set_step


@app.cell
def _(replay, set_step):
    # In a cell of their own: a press re-runs the slider's cell, which reads the step.
    step_jumps = wb.jump_buttons(replay, set_step)
    return (step_jumps,)


@app.cell
def _(get_step, replay, set_step):
    step_pick = wb.step_slider(replay, get_step(), set_step)
    return (step_pick,)


@app.cell
def _(replay, step_jumps, step_pick):
    wb.replay_view(replay, step_pick.value, step_pick, step_jumps)
    return


if __name__ == "__main__":
    app.run()
