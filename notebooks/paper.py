import marimo

__generated_with = "0.25.2"
app = marimo.App(width="full", app_title="partial-evidence-bench paper")


with app.setup:
    from pathlib import Path

    import marimo as mo

    from peb_core import reporting, results, tasks
    from peb_core.frontends import workbench as wb

    ROOT = results.runs_root()


@app.cell
def _():
    # `python notebooks/paper.py -- --out DIR [--runs RUN,RUN,...] [--tier hard]
    # [--include-failed true]` exports headless (runs: folders, folders of runs or globs).
    ARGS = mo.cli_args()
    _asked = [r.strip() for r in str(ARGS.get("runs") or "").split(",") if r.strip()]
    ASKED = results.select_runs(_asked, include_unclean=True)[0] if _asked else None
    return ARGS, ASKED


@app.cell
def _(ARGS, ASKED):
    tier_pick = mo.ui.dropdown(
        options=list(tasks.TIERS), value=str(ARGS.get("tier") or tasks.DEFAULT_TIER), label="Tier"
    )
    include_failed = mo.ui.checkbox(
        value=str(ARGS.get("include-failed") or "").lower() == "true",
        label="Include runs with errors, missing tasks or not finished",
    )
    _every = ASKED if ASKED is not None else results.discover_runs(ROOT) if ROOT.is_dir() else []
    _default = ASKED if ASKED is not None else results.discover_runs(ROOT, scratch=False)
    run_options = wb.run_options(ROOT, _every)
    run_pick = mo.ui.multiselect(
        options=list(run_options),
        value=[k for k, d in run_options.items() if d in _default],
        label=f"Runs (under {ROOT}; scratch runs only if picked)",
    )
    mo.vstack([mo.hstack([tier_pick, include_failed], justify="start"), run_pick])
    return include_failed, run_options, run_pick, tier_pick


@app.cell
def _(include_failed, run_options, run_pick, tier_pick):
    picked, _left_out = results.select_runs(
        [run_options[k] for k in run_pick.value], include_unclean=include_failed.value
    )
    tables = reporting.tables(picked, tier_pick.value)
    figures = reporting.figures(picked, tier_pick.value)
    captions = reporting.captions(tier_pick.value)
    mo.vstack(
        [
            mo.md(
                f"# Paper tables and figures ({tier_pick.value} tier)\n\n"
                f"Regenerated from `scenarios/` and {len(picked)} selected runs; nothing is "
                "copied from the paper except the published Table 4, shown beside the measured "
                "one. Numbers as printed: 3 decimals, each with its 95% interval."
            ),
            mo.callout(mo.md("Left out:  \n" + "  \n".join(_left_out)), kind="warn")
            if _left_out
            else mo.md(""),
        ]
    )
    return captions, figures, picked, tables


@app.cell
def _(captions, tables):
    mo.vstack(
        [
            mo.vstack(
                [
                    mo.md(f"## {reporting.NAMES[stem]}\n\n{captions[stem]}"),
                    mo.ui.table(
                        reporting.as_printed(frame, headers=reporting.HEADERS), selection=None
                    ),
                ]
            )
            for stem, frame in tables.items()
            if stem != "table4_baselines"
        ]
    )
    return


@app.cell
def _(captions, tables):
    table4 = tables["table4_baselines"]
    mismatches = table4.filter(~table4["matches_published"])
    mo.vstack(
        [
            mo.md(f"## {reporting.NAMES['table4_baselines']}\n\n{captions['table4_baselines']}"),
            mo.ui.table(reporting.as_printed(table4, headers=reporting.HEADERS), selection=None),
            mo.callout(
                f"{mismatches.height} of {table4.height} rows differ from the published table",
                kind="danger",
            )
            if mismatches.height
            else mo.callout("Every row equals the published table", kind="success"),
        ]
    )
    return


@app.cell
def _(captions, figures):
    mo.vstack(
        [mo.md("## Figures")]
        + [
            mo.vstack([mo.md(f"### {reporting.NAMES[stem]}\n\n{captions[stem]}"), chart])
            for stem, chart in figures.items()
        ]
        if figures
        else [mo.md("## Figures"), mo.callout("No runs found: no figures.", kind="warn")]
    )
    return


@app.cell
def _(ARGS):
    # By default under the runs root's scratch folder, which git ignores, never in the checkout.
    out_text = mo.ui.text(
        value=str(ARGS.get("out") or ROOT / results.SCRATCH / "paper_export"),
        label="Output folder",
        full_width=True,
    )
    export_button = mo.ui.run_button(
        label="Export tables (md, tex, csv) and figures (png, svg, pdf)"
    )
    mo.vstack([mo.md("## Export"), out_text, export_button])
    return export_button, out_text


@app.cell
def _(ARGS, export_button, out_text, picked, tier_pick):
    target = ARGS.get("out") or (out_text.value if export_button.value else None)
    if target:
        written = reporting.export_report(Path(str(target)), picked, tier_pick.value)
        print(*written, sep="\n")
        result = mo.callout(
            f"Wrote {len(written)} files of {len(picked)} runs to `{target}`", kind="success"
        )
    else:
        result = mo.md("Press the button to export.")
    mo.vstack([result])
    return


if __name__ == "__main__":
    app.run()
