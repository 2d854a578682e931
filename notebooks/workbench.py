import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench workbench")


@app.cell
def _():
    from pathlib import Path

    import marimo as mo
    import polars as pl

    from peb_core import runs, scoring, tasks
    from peb_core.systems import BASELINES, DEFAULT_PROTOCOL, PROTOCOLS, REGISTRY, build_system

    # Headless: `python notebooks/workbench.py -- --run fail_and_report --family F --out DIR`
    # (also --seeds LIST, --tier hard, --protocol P) runs as the Run button does, under DIR.
    args = mo.cli_args()
    RUNS = Path(str(args.get("out"))) if args.get("out") else runs.runs_root()
    HEADLESS_RUN = [n.strip() for n in str(args.get("run") or "").split(",") if n.strip()]
    families = tasks.load_families()
    SYSTEMS = [*BASELINES, *(f"local/{name}" for name in REGISTRY)]
    return (
        DEFAULT_PROTOCOL,
        HEADLESS_RUN,
        PROTOCOLS,
        RUNS,
        SYSTEMS,
        args,
        build_system,
        families,
        mo,
        pl,
        runs,
        scoring,
        tasks,
    )


@app.cell
def _(mo):
    get_runs_version, set_runs_version = mo.state(0)
    return get_runs_version, set_runs_version


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
    run_button = mo.ui.run_button(label="Run selected systems", kind="success")
    mo.vstack(
        [
            mo.md(
                "# partial-evidence-bench workbench\n"
                "Pick what to run; results are saved as run folders and reused (a run asked "
                "for again resumes; model replies are cached). The tier also picks which runs "
                "the tables below show."
            ),
            mo.hstack([family_pick, seeds_text, tier_pick, protocol_pick], justify="start"),
            mo.hstack([system_pick, model_text, api_base], justify="start"),
            run_button,
        ]
    )
    return (
        api_base,
        family_pick,
        model_text,
        protocol_pick,
        run_button,
        seeds_text,
        system_pick,
        tier_pick,
    )


@app.cell
async def _(
    HEADLESS_RUN,
    RUNS,
    api_base,
    build_system,
    families,
    family_pick,
    get_runs_version,
    mo,
    model_text,
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
    try:
        _seeds = tasks.parse_seeds(seeds_text.value) if seeds_text.value.strip() else None
        _systems = [
            build_system(n, _specs, protocol=protocol_pick.value, api_base=api_base.value or None)
            for n in _names
        ]
    except ValueError as _exc:  # bad seeds, or a SystemSpecError
        mo.stop(True, mo.callout(str(_exc), kind="danger"))
    _total = tasks.count_tasks(_specs, _seeds)
    _done = []
    for _system in _systems:
        with mo.status.progress_bar(
            total=_total, title=f"Running {_system.name}", remove_on_exit=True
        ) as _bar:
            _seen = [0]

            def _advance(done: int, total: int, bar=_bar, seen=_seen) -> None:
                bar.update(increment=done - seen[0])
                seen[0] = done

            _dir, _manifest = await runs.launch_run_async(
                _system, _specs, RUNS, seeds=_seeds, tier=tier_pick.value, on_progress=_advance
            )
        _c = _manifest.counts
        _done.append(
            f"{_system.name}: {_c.n_tasks} tasks ({_c.ok} replies, {_c.error} errors) -> {_dir}"
        )
        print(_done[-1])
    set_runs_version(get_runs_version() + 1)
    mo.callout(mo.md("\n\n".join(f"`{d}`" for d in _done)), kind="success")
    return


@app.cell
def _(RUNS, get_runs_version, mo, runs):
    get_runs_version()
    run_dirs = {str(p.relative_to(RUNS)): p for p in runs.discover_runs(RUNS)}
    run_pick = mo.ui.multiselect(
        options=list(run_dirs), value=list(run_dirs), label=f"Runs under {RUNS}"
    )
    mo.hstack([run_pick], justify="start")
    return run_dirs, run_pick


@app.cell
def _(run_dirs, run_pick, runs):
    # Scored once per choice of runs (each run's scores are saved beside it); a family or tier
    # choice only filters these rows.
    if run_pick.value:
        _picked = [run_dirs[r] for r in run_pick.value]
        scores, warnings = runs.score_run_dirs(_picked)
    else:
        _picked, scores, warnings = [], None, []
    # The `run` column holds each folder's label (its name, or more of its path if two share it).
    run_paths = {label: d for d, label in runs.run_labels(_picked).items()}
    return run_paths, scores, warnings


@app.cell
def _(family_pick, mo, pl, scores, scoring, tier_pick, warnings):
    mo.stop(scores is None, mo.callout("No runs selected (or none on disk yet).", kind="info"))
    view = scoring.filter_scores(scores, families=family_pick.value, tiers=[tier_pick.value])
    card = scoring.scorecard(view)
    mo.vstack(
        [
            mo.md(
                f"## Scorecard ({tier_pick.value} tier)\n"
                f"Scorecard: {card.height} rows, {view.height} scored responses, "
                f"families {', '.join(sorted(family_pick.value)) or '(none)'}. "
                "`unsafe` is the headline; `unsafe_max` counts unreadable replies, errors and "
                "missing records as unsafe; `format` is the share of format-compliant replies."
            ),
            mo.ui.table(
                scoring.glance(card).with_columns(pl.selectors.float().round(3)),
                selection=None,
                page_size=10,
                show_column_summaries=False,
                show_data_types=False,
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

    mo.stop(view.is_empty())
    mo.vstack(
        [
            mo.md("## Completeness: true against claimed"),
            _charts.confusion_heatmap(view),
            mo.md(
                "## Operating profile\nUnsafe completeness against over-blocking; "
                "the bigger the mark, the better the answers."
            ),
            _charts.operating_profile(card),
        ]
    )
    return


@app.cell
def _(mo, pl, scoring, view):
    task_rows = mo.ui.table(
        scoring.task_table(view).with_columns(pl.selectors.float().round(3)),
        selection="single",
        page_size=10,
        show_column_summaries=False,
        show_data_types=False,
        label="Per task",
    )
    mo.vstack([mo.md("## Per task (select a row for its worked example)"), task_rows])
    return (task_rows,)


@app.cell
def _(families, mo, run_paths, runs, scoring, task_rows, tasks):
    _picked = task_rows.value is not None and not task_rows.value.is_empty()
    _rows = task_rows.value if _picked else task_rows.data
    mo.stop(_rows.is_empty())
    _row = _rows.row(0, named=True)
    _spec = families[_row["family"]]
    _ref = tasks.parse_task_id(_row["task_id"])
    _dir = run_paths[_row["run"]]
    _manifest = runs.read_manifest(_dir)
    _task = tasks.generate_task(_spec, _ref.template, _ref.seed, _manifest.distractors, _ref.tier)
    _record = runs.run_record(_dir, _row["family"], _row["task_id"])
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
