import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench workbench")


@app.cell
def _():
    import time
    from pathlib import Path

    import marimo as mo

    from peb_core import results, runs, scoring, tasks
    from peb_core.systems import (
        BASELINES,
        DEFAULT_PROTOCOL,
        PROTOCOLS,
        REGISTRY,
        build_system,
        get_local,
        local_status,
        stop_local,
    )

    # Headless: `python notebooks/workbench.py -- --run fail_and_report --family F --out DIR`
    # (also --seeds LIST, --tier hard, --protocol P, --name NAME, --limit N) runs as the Run
    # button does, into DIR (the Run button: into the scratch area of the runs root).
    args = mo.cli_args()
    RUNS = Path(str(args.get("out"))) if args.get("out") else results.runs_root()
    HEADLESS_RUN = [n.strip() for n in str(args.get("run") or "").split(",") if n.strip()]
    LAUNCH_ROOT = RUNS if HEADLESS_RUN else RUNS / results.SCRATCH
    families = tasks.load_families()
    SYSTEMS = [*BASELINES, *(f"local/{name}" for name in REGISTRY)]
    LOCAL_MODELS = [get_local(f"local/{name}") for name in REGISTRY]
    return (
        DEFAULT_PROTOCOL,
        HEADLESS_RUN,
        LAUNCH_ROOT,
        LOCAL_MODELS,
        PROTOCOLS,
        RUNS,
        SYSTEMS,
        args,
        build_system,
        families,
        local_status,
        mo,
        results,
        runs,
        scoring,
        stop_local,
        tasks,
        time,
    )


@app.cell
def _(mo):
    get_runs_version, set_runs_version = mo.state(0)
    get_seen, set_seen = mo.state((0, 0.0))
    return get_runs_version, get_seen, set_runs_version, set_seen


@app.cell
def _(DEFAULT_PROTOCOL, HEADLESS_RUN, PROTOCOLS, SYSTEMS, args, families, mo, tasks):
    _asked = [f.strip() for f in str(args.get("family") or "").split(",") if f.strip()]
    family_pick = mo.ui.multiselect(
        options=list(families),
        value=[f for f in _asked if f in families] or list(families),
        label="Families",
    )
    seeds_text = mo.ui.text(
        value=str(args.get("seeds") or ""),
        placeholder="canonical (11, 23, 37, 53)",
        label="Seeds (e.g. 11,23 or 400-439)",
    )
    tier_pick = mo.ui.dropdown(
        options=list(tasks.TIERS),
        value=str(args.get("tier") or "paper"),
        label="Tier (paper: the paper's tasks; hard: surface cues do not solve them)",
    )
    system_pick = mo.ui.multiselect(
        options=SYSTEMS,
        value=[s for s in HEADLESS_RUN if s in SYSTEMS] or ["fail_and_report"],
        label="Systems",
    )
    model_text = mo.ui.text(
        value=",".join(s for s in HEADLESS_RUN if s not in SYSTEMS),
        placeholder="openai/gpt-4o-mini, ...",
        label="litellm model strings",
    )
    api_base = mo.ui.text(placeholder="http://HOST/v1 (optional)", label="API base")
    protocol_pick = mo.ui.dropdown(
        options=list(PROTOCOLS),
        value=str(args.get("protocol") or DEFAULT_PROTOCOL),
        label="Protocol (models)",
    )
    name_text = mo.ui.text(
        value=str(args.get("name") or ""),
        placeholder="from the system and selection",
        label="Run name",
    )
    limit_text = mo.ui.text(
        value=str(args.get("limit") or ""), placeholder="every task", label="Task limit"
    )
    run_button = mo.ui.run_button(label="Run selected systems", kind="success")
    stop_button = mo.ui.run_button(label="Stop", kind="danger")
    mo.vstack(
        [
            mo.md(
                "# partial-evidence-bench workbench\n"
                "Pick what to run. Runs started here are saved under `scratch/` in the runs "
                "root (kept out of `peb report` unless picked) and resumed when asked for "
                "again: Run again retries tasks that ended in error. Model replies are cached. "
                "The tier also picks which runs the tables below show."
            ),
            mo.hstack([family_pick, seeds_text, tier_pick, protocol_pick], justify="start"),
            mo.hstack([system_pick, model_text, api_base], justify="start"),
            mo.hstack([name_text, limit_text, run_button, stop_button], justify="start"),
        ]
    )
    return (
        api_base,
        family_pick,
        limit_text,
        model_text,
        name_text,
        protocol_pick,
        run_button,
        seeds_text,
        stop_button,
        system_pick,
        tier_pick,
    )


@app.cell
def _(
    HEADLESS_RUN,
    LAUNCH_ROOT,
    api_base,
    build_system,
    families,
    family_pick,
    get_runs_version,
    limit_text,
    mo,
    model_text,
    name_text,
    protocol_pick,
    run_button,
    runs,
    seeds_text,
    set_runs_version,
    system_pick,
    tasks,
    tier_pick,
):
    mo.stop(not (run_button.value or HEADLESS_RUN))
    _names = [*system_pick.value, *(m.strip() for m in model_text.value.split(",") if m.strip())]
    _specs = [families[f] for f in family_pick.value]
    _problems = []
    if not _specs:
        _problems.append("Pick at least one family.")
    if not _names:
        _problems.append("Pick at least one system, or type a litellm model string.")
    try:
        _seeds = tasks.parse_seeds(seeds_text.value) if seeds_text.value.strip() else None
    except ValueError as _exc:
        _problems.append(f"Seeds: {_exc}.")
    _limit = limit_text.value.strip()
    if _limit and not (_limit.isdigit() and int(_limit) > 0):
        _problems.append(f"Task limit: expected a whole number >= 1, got {_limit!r}.")
    _name = name_text.value.strip()
    if _name and not runs.is_run_name(_name):
        _problems.append(
            f"Run name: {_name!r}; use letters, digits and . _ @ - (no spaces or slashes)."
        )
    if _problems:
        mo.stop(
            True, mo.callout(mo.md("Nothing was run.  \n" + "  \n".join(_problems)), kind="danger")
        )
    try:
        _systems = [
            build_system(n, _specs, protocol=protocol_pick.value, api_base=api_base.value or None)
            for n in _names
        ]
    except ValueError as _exc:  # a SystemSpecError: one line naming what is valid
        mo.stop(True, mo.callout(f"Nothing was run. {_exc}", kind="danger"))
    _plan = [
        (
            _s,
            LAUNCH_ROOT
            / runs.launch_folder(
                _s, _specs, _seeds, tier_pick.value, _name, several=len(_systems) > 1
            ),
        )
        for _s in _systems
    ]
    _job = runs.start_runs(
        _plan, _specs, seeds=_seeds, tier=tier_pick.value, limit=int(_limit) if _limit else None
    )
    _retrying = [f"{n} of {d.name}" for d, n in _job.retrying.items() if n]
    if HEADLESS_RUN:
        _job.wait()
        _names_of = {d: sys_.name for sys_, d in _plan}
        for _dir, _status in _job.ended:
            print(f"{_names_of[_dir]}: {_status.summary()} -> {_dir}")
        if _job.failure:
            print(f"failed: {_job.failure}")
        set_runs_version(get_runs_version() + 1)
    mo.callout(
        mo.md(
            f"Started {', '.join(f'`{s.name}`' for s in _systems)} into "
            + ", ".join(f"`{d}`" for _, d in _plan)
            + (
                f"; retrying the error records of an earlier attempt ({', '.join(_retrying)})."
                if _retrying
                else "."
            )
        ),
        kind="info",
    )
    return


@app.cell
def _(mo):
    ticker = mo.ui.refresh(default_interval="1s", label="Progress refresh")
    server_stop = mo.ui.run_button(label="Stop the embedded model servers", kind="danger")
    return server_stop, ticker


@app.cell
def _(
    LAUNCH_ROOT,
    get_runs_version,
    get_seen,
    mo,
    runs,
    set_runs_version,
    set_seen,
    stop_button,
    ticker,
    time,
):
    ticker.value  # noqa: B018  (re-run every second)
    _jobs = runs.run_jobs()
    if stop_button.value:
        for _job in _jobs:
            if _job.running:
                _job.stop()
    _lines = []
    for _job in _jobs:
        if _job.running and _job.current is not None:
            _lines.append(
                mo.md(
                    f"Running `{_job.current.relative_to(LAUNCH_ROOT.parent)}`: "
                    f"{_job.done} of {_job.total} tasks "
                    f"<progress value='{_job.done}' max='{max(_job.total, 1)}'></progress>"
                    + (" (stopping)" if _job.stopped else "")
                )
            )
        for _dir, _status in _job.ended:
            _retried = _job.retrying.get(_dir, 0)
            _kind = "success" if _status.clean else "danger" if _status.errors else "warn"
            _lines.append(
                mo.callout(
                    mo.md(
                        f"`{_dir.relative_to(LAUNCH_ROOT.parent)}` {_status.summary()}"
                        + (f"; retried {_retried} error records" if _retried else "")
                    ),
                    kind=_kind,
                )
            )
        if _job.failure:
            _lines.append(mo.callout(f"Run failed: {_job.failure}", kind="danger"))
    # Rescore what is on disk when a run ends, and every 5 s while one runs.
    _ended = sum(len(j.ended) + bool(j.failure) for j in _jobs)
    _seen, _last = get_seen()
    _live = any(j.running for j in _jobs)
    if _ended != _seen or (_live and time.monotonic() - _last > 5):
        set_seen((_ended, time.monotonic()))
        set_runs_version(get_runs_version() + 1)
    # The ticker must be on the page for it to tick.
    mo.vstack([mo.Html(f"<div style='display: none'>{ticker}</div>"), *_lines[-6:]])
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
def _(RUNS, get_runs_version, mo, results):
    get_runs_version()
    run_dirs = {str(p.relative_to(RUNS)): p for p in results.discover_runs(RUNS)}
    run_pick = mo.ui.multiselect(
        options=list(run_dirs), value=list(run_dirs), label=f"Runs under {RUNS}"
    )
    mo.hstack([run_pick], justify="start")
    return run_dirs, run_pick


@app.cell
def _(results, run_dirs, run_pick):
    # Scored once per choice of runs (each run's scores are saved beside it); a family or tier
    # choice only filters these rows.
    if run_pick.value:
        _picked = [run_dirs[r] for r in run_pick.value]
        scores, warnings = results.score_run_dirs(_picked, skip_unreadable=True)
    else:
        _picked, scores, warnings = [], None, []
    # The `run` column holds each folder's label (its name, or more of its path if two share it).
    run_paths = {label: d for d, label in results.run_labels(_picked).items()}
    return run_paths, scores, warnings


@app.cell
def _(family_pick, mo, run_paths, runs, scores, scoring, tier_pick, warnings):
    mo.stop(scores is None, mo.callout("No runs selected (or none on disk yet).", kind="info"))
    view = scoring.filter_scores(scores, families=family_pick.value, tiers=[tier_pick.value])
    card = scoring.scorecard(view)
    _shown = scoring.glance(card, intervals=True, keys=["run", "family"])
    _unclean = card.filter(card["status"] != "ok")
    _notes = []
    for _label in dict.fromkeys(_unclean["run"].to_list()):
        _notes.append(f"`{_label}`: {runs.run_status(run_paths[_label]).summary()}")
    mo.vstack(
        [
            mo.md(
                f"## Scorecard ({tier_pick.value} tier)\n"
                f"Scorecard: {card.height} rows, {view.height} scored responses, "
                f"families {', '.join(sorted(family_pick.value)) or '(none)'}. Each rate and "
                "mean with its 95% interval. `unsafe` is the headline; `unsafe_max` counts "
                "unreadable replies, errors and missing records as unsafe; `format` is the share "
                "of format-compliant replies. Only rows whose `status` is `ok` are finished "
                "numbers."
            ),
            mo.callout(
                mo.md(
                    f"{_unclean.height} of {card.height} rows are not finished numbers (their "
                    "runs are left out of the charts):  \n" + "  \n".join(_notes)
                ),
                kind="danger",
            )
            if _notes
            else mo.md(""),
            mo.ui.table(
                _shown,
                selection=None,
                page_size=10,
                show_column_summaries=False,
                show_data_types=False,
                freeze_columns_left=["run"],
                header_tooltip={m.label: f"{m.title}: over {m.over}" for m in scoring.METRICS},
                style_cell=lambda _row, column, value: (
                    {"color": "#b00020", "fontWeight": "bold"}
                    if column == "status" and value != "ok"
                    else {}
                ),
            ),
            *(mo.callout(w, kind="warn") for w in warnings[:3]),
            mo.md(f"_and {len(warnings) - 3} more warnings_") if len(warnings) > 3 else mo.md(""),
        ]
    )
    return card, view


@app.cell
def _(card, mo, view):
    # altair is imported here, after the scorecard cell has run, not before it.
    from peb_core.reporting import charts as _charts

    _clean = card.filter(card["status"] == "ok")
    _view = view.join(_clean.select("run", "family"), on=["run", "family"], how="semi")
    mo.stop(_view.is_empty(), mo.md("_No finished run to chart._"))
    mo.vstack(
        [
            mo.md("## Completeness: true against claimed"),
            _charts.confusion_heatmap(_view),
            mo.md(
                "## Operating profile\nUnsafe completeness against over-blocking; "
                "the bigger the mark, the better the answers."
            ),
            _charts.operating_profile(_clean),
        ]
    )
    return


@app.cell
def _(mo, scoring, view):
    _tasks = scoring.task_table(view)
    task_rows = mo.ui.table(
        _tasks,
        format_mapping=scoring.float_formats(_tasks),
        selection="single",
        page_size=10,
        show_column_summaries=False,
        show_data_types=False,
        label="Per task",
    )
    mo.vstack([mo.md("## Per task (select a row for its worked example)"), task_rows])
    return (task_rows,)


@app.cell
def _(families, mo, results, run_paths, runs, scoring, task_rows, tasks):
    _picked = task_rows.value is not None and not task_rows.value.is_empty()
    _rows = task_rows.value if _picked else task_rows.data
    mo.stop(_rows.is_empty())
    _row = _rows.row(0, named=True)
    _spec = families[_row["family"]]
    _ref = tasks.parse_task_id(_row["task_id"])
    _dir = run_paths[_row["run"]]
    _manifest = runs.read_manifest(_dir)
    _task = tasks.generate_task(_spec, _ref.template, _ref.seed, _manifest.distractors, _ref.tier)
    _record = results.run_record(_dir, _row["family"], _row["task_id"])
    _shown = scoring.explain(_task, _record, _spec, run=_row["run"], system=_row["system"])
    _docs = tasks.documents_frame(_task, _spec)
    _target, _ = scoring.answer_target(_task)

    def _cards(visible):
        cards = tasks.document_cards(_docs, visible=visible)
        if not cards:
            return [mo.md("_(none)_")]
        return [
            mo.callout(
                mo.vstack([mo.md("Boundary signal (tracker)"), mo.md(c.markdown)]), kind="warn"
            )
            if c.boundary_signal
            else mo.md(c.markdown)
            for c in cards
        ]

    _fmt = scoring.format_float
    mo.vstack(
        [
            mo.md(
                f"## Worked example: `{_task.task_id}` answered by `{_row['system']}` "
                f"(run `{_row['run']}`)\n"
                f"{_task.prompt}\n\n"
                f"Completeness `{_task.oracles.completeness}`, policy `{_row['policy']}`, "
                f"topologies `{', '.join(_task.topologies) or '-'}`, "
                f"verdict **{_row['verdict']}**; answer score {_fmt(_row['answer_score'])}, "
                f"gap score {_fmt(_row['gap_score'])}."
                + ("" if _picked else "  \n_The first task of the table; select a row._")
            ),
            mo.hstack(
                [
                    mo.vstack([mo.md("### Visible"), *_cards(True)]),
                    mo.vstack([mo.md("### Hidden"), *_cards(False)]),
                ],
                widths="equal",
                align="start",
            ),
            mo.md(
                "### Answer: the complete-world and authorized-view answers against the response\n"
                f"The response is scored against `{_target}` (`expected`)."
            ),
            mo.ui.table(
                _shown.fields,
                selection=None,
                show_column_summaries=False,
                format_mapping=scoring.float_formats(_shown.fields),
                wrapped_columns=["complete_answer", "authorized_answer", "expected", "response"],
            ),
            mo.md("### Gap report: oracle against the response"),
            mo.ui.table(
                _shown.gap,
                selection=None,
                show_column_summaries=False,
                format_mapping=scoring.float_formats(_shown.gap),
                wrapped_columns=["oracle", "response"],
            ),
            mo.md(
                f"Mean field score {_fmt(_shown.fields['score'].mean())}, mean gap part score "
                f"{_fmt(_shown.gap['score'].mean())}. Schema violations: "
                + (", ".join(f"`{v}`" for v in _shown.violations) or "none")
                + "."
            ),
            mo.md("### The reply (pretty-printed if it is JSON)"),
            mo.md(scoring.reply_markdown(_record.raw if _record is not None else None)),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
