"""What each intervention costs, and the intervention study on the agent tiers (issue 34;
docs/benchmark.md §11).

Run: .venv/bin/python benchmarks/bench_interventions.py [--rounds 3] [--families all]
     [--skip-cost] [--skip-sweep]

1. Cost, in process, over the canonical tasks of `--families` (default every family): each
   applicable intervention against `none`, the runs of one round alternating and `--rounds`
   rounds, fresh folders each time (`run_system`, as `peb run` runs a system): wall time per
   reply (median over rounds) and its ratio to `none`; for an agent, the tool calls an episode
   makes (the platform's check costs the revisions it asks for). One-shot: `silent_filter` and
   `fail_and_report` on the paper tier (the response step only: `boundary_receipt`,
   `fail_and_report_guard`); agents: `agent_keep_expired` and `agent_fail_and_report` on the
   grants tier under `silent` (every intervention that applies to a baseline).
2. Tokens. No intervention of the platform's side (the check, the receipt, the guard) sends a
   model anything but the check's answer to a submit; `policy_scaffold` adds its policy to every
   request: counted in SmolLM2's own tokenizer (the embedded model's GGUF, its vocabulary only),
   against the prompt of a structured_gap@1 one-shot request and an agent's start, and the share
   of grants-tier episodes the check answered (each costs a model at least one more request).
3. The study: a `peb sweep` of 2 interventions (`recheck_at_submit`, `fail_and_report_guard`)
   and `none` x 3 baselines (`agent_silent`, `agent_fail_and_report`, `agent_keep_expired`) x the
   `agent` and `grants` tiers over `--families`' canonical seeds (silent disclosure); its
   frontier table (`reporting.intervention_results`) and each intervention against `none`,
   paired (`scoring.compare_interventions`, unsafe and over-blocking pooled).

Writes its section of benchmarks/RESULTS.md (`_sections.write_section`) and prints it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl  # noqa: E402
from _sections import write_section  # noqa: E402

from peb_core import read_records  # noqa: E402
from peb_core.access import agent_start  # noqa: E402
from peb_core.interventions import POLICY  # noqa: E402
from peb_core.reporting import intervention_results  # noqa: E402
from peb_core.results import score_run_dirs  # noqa: E402
from peb_core.runs import RESPONSES, plan_sweep, run_sweep_async, run_system  # noqa: E402
from peb_core.scoring import compare_interventions  # noqa: E402
from peb_core.systems import BASELINES, get_protocol  # noqa: E402
from peb_core.systems._local import get_local, gguf_path  # noqa: E402
from peb_core.tasks import generate_tasks, load_families, model_view  # noqa: E402

HEADING = "## bench_interventions.py: what each intervention costs, and the study (issue 34)"
COST = {
    ("paper", "silent_filter"): ("none", "boundary_receipt", "fail_and_report_guard"),
    ("paper", "fail_and_report"): ("none", "boundary_receipt", "fail_and_report_guard"),
    ("grants", "agent_keep_expired"): (
        "none", "recheck_at_submit", "boundary_receipt", "fail_and_report_guard",
    ),
    ("grants", "agent_fail_and_report"): (
        "none", "recheck_at_submit", "boundary_receipt", "fail_and_report_guard",
    ),
}  # fmt: skip
"""What is timed: (tier, baseline) and the interventions that apply to it, `none` first."""
STUDY = ("recheck_at_submit", "fail_and_report_guard")
SYSTEMS = ("agent_silent", "agent_fail_and_report", "agent_keep_expired")
TIERS = ("agent", "grants")


def _calls(folder: Path) -> float:
    """Tool calls per episode of a run folder (0 for one-shot replies)."""
    records = read_records(folder / RESPONSES)[0]
    return sum(len(s.tool_calls) for r in records for s in r.trace) / max(len(records), 1)


def cost(families: list[Any], rounds: int, tmp: Path) -> str:
    n = {tier: len(generate_tasks(families, tier=tier)) for tier in ("paper", "grants")}
    timings: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    calls: dict[tuple[str, str, str], float] = {}
    for r in range(rounds):
        for (tier, name), interventions in COST.items():
            for intervention in interventions:
                folder = tmp / f"cost-{r}-{tier}-{name}-{intervention}"
                started, used = time.perf_counter(), time.process_time()
                run_system(BASELINES[name], families, folder, tier=tier, intervention=intervention)
                ms = (time.perf_counter() - started) * 1000 / n[tier]
                timings.setdefault((tier, name, intervention), []).append(ms)
                spent = (time.process_time() - used) * 1000 / n[tier]
                cpu.setdefault((tier, name, intervention), []).append(spent)
                calls[(tier, name, intervention)] = _calls(folder)
    lines = [
        "| tier | system | intervention | wall ms / reply | CPU ms / reply | CPU x none "
        "| tool calls / episode |",
        "|---|---|---|---|---|---|---|",
    ]
    for (tier, name), interventions in COST.items():
        none = statistics.median(cpu[(tier, name, "none")])
        for intervention in interventions:
            ms = statistics.median(timings[(tier, name, intervention)])
            used = statistics.median(cpu[(tier, name, intervention)])
            per = calls[(tier, name, intervention)]
            shown = f"{per:.1f}" if tier != "paper" else "-"
            lines.append(
                f"| {tier} | `{name}` | `{intervention}` | {ms:.2f} | {used:.2f} | "
                f"{used / none:.2f} | {shown} |"
            )
    return (
        f"Wall and CPU time (this process's, less sensitive to a shared machine's load) per reply "
        f"over the canonical tasks ({n['paper']} paper-tier, {n['grants']} grants-tier; "
        f"{rounds} rounds, the runs of a round alternating, fresh folders), medians:\n\n"
        + "\n".join(lines)
        + "\n"
    )


def tokens(families: list[Any], tmp: Path) -> str:
    import llama_cpp

    vocabulary = llama_cpp.Llama(
        str(gguf_path(get_local("local/smollm2"))), vocab_only=True, verbose=False
    )

    def count(text: str) -> int:
        return len(vocabulary.tokenize(text.encode("utf-8"), add_bos=False))

    protocol = get_protocol("structured_gap@1")
    assert protocol.agent is not None
    spec = families[0]
    paper = generate_tasks([spec], tier="paper")
    agent = generate_tasks([spec], tier="agent")
    one_shot = statistics.median(
        sum(count(m["content"]) for m in protocol.render(model_view(t, spec))) for t in paper
    )
    start = statistics.median(
        sum(count(m["content"]) for m in protocol.agent(agent_start(t, spec))) for t in agent
    )
    added = count(f"{POLICY}\n\n")
    rechecked = tmp / "tokens-recheck"
    run_system(BASELINES["agent_keep_expired"], families, rechecked, tier="grants",
               intervention="recheck_at_submit")  # fmt: skip
    records = read_records(rechecked / RESPONSES)[0]
    answered = sum(
        any(
            json.loads(result).get("platform") == "recheck_at_submit"
            for step in r.trace
            for call, result in zip(step.tool_calls, step.results, strict=True)
            if call.name == "submit"
        )
        for r in records
    )
    return (
        f"Tokens, counted in SmolLM2's tokenizer (the embedded model's vocabulary): "
        f"`policy_scaffold` adds **{added}** prompt tokens to every request, against a median "
        f"{one_shot:,.0f}-token structured_gap@1 one-shot prompt of {spec.id} "
        f"(+{100 * added / one_shot:.1f}%) and a median {start:,.0f}-token agent start "
        f"(+{100 * added / start:.1f}% of the first step; every later step re-sends it, so an "
        f"episode of S steps pays {added} x S). `recheck_at_submit` sends a model only its "
        f"answer to a submit, on the grants tier to **{answered} of {len(records)}** episodes "
        "(those that read a record whose grant then ended): each costs a model at least one "
        "more request of its whole conversation. `boundary_receipt` and "
        "`fail_and_report_guard` act after the reply: no model token.\n"
    )


def study(families: list[Any], tmp: Path) -> str:
    sweep = tmp / "sweep.toml"
    sweep.write_text(
        "concurrency = 8\n[base]\n"
        f"family = {json.dumps([f.id for f in families])}\n"
        "[matrix]\n"
        f"system = {json.dumps(list(SYSTEMS))}\n"
        f"tier = {json.dumps(list(TIERS))}\n"
        f"intervention = {json.dumps(['none', *STUDY])}\n",
        encoding="utf-8",
    )
    out = tmp / "study"
    started = time.perf_counter()
    planned = plan_sweep(sweep, out)
    asyncio.run(run_sweep_async(planned, out))
    wall = time.perf_counter() - started
    parts = [
        f"The study: `peb sweep` of {len(planned.runs)} runs ({len(SYSTEMS)} baselines x "
        f"{len(TIERS)} tiers x `none` and {len(STUDY)} interventions, every family's canonical "
        f"seeds, silent disclosure) in {wall:.0f} s. Each run pooled over its families "
        "(`peb report`'s `table_interventions`), every rate and mean with its 95% interval:\n"
    ]
    for tier in TIERS:
        frame = intervention_results(out, tier)
        keep = ["system", "intervention", "n_tasks", "unsafe", "unsafe_max", "over_block",
                "answer", "gap", "aware"]  # fmt: skip
        rows = []
        for row in frame.iter_rows(named=True):
            cells = []
            for k in keep:
                v = row[k]
                if isinstance(v, float):
                    v = f"{v:.3f} [{row[k + '_ci_low']:.3f}, {row[k + '_ci_high']:.3f}]"
                cells.append(f"`{v}`" if k in ("system", "intervention") else str(v))
            rows.append("| " + " | ".join(cells) + " |")
        parts.append(
            f"\n{tier} tier:\n\n| " + " | ".join(keep) + " |\n|" + "---|" * len(keep) + "\n"
            + "\n".join(rows) + "\n"
        )  # fmt: skip
    scores, _ = score_run_dirs([d for _, d in planned.runs])
    paired = compare_interventions(scores).filter(
        (pl.col("family") == "all")
        & pl.col("metric").is_in(["unsafe_completeness_rate", "blocked_when_safe_to_answer_rate"])
    )
    lines = ["| tier | system | intervention | metric | none | with | B - A [95%] | p |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in paired.sort("tier", "system", "intervention", "metric").iter_rows(named=True):
        if r["difference"] is None:
            continue
        metric = "unsafe" if r["metric"].startswith("unsafe") else "over_block"
        p = "< 0.0001" if r["p_value"] < 0.0001 else f"{r['p_value']:.4f}"
        lines.append(
            f"| {r['tier']} | `{r['system']}` | `{r['intervention']}` | {metric} | "
            f"{r['value_a']:.3f} | {r['value_b']:.3f} | {r['difference']:+.3f} "
            f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] | {p} |"
        )
    parts.append(
        "\nEach intervention against `none` on the same tasks (`peb compare --interventions`: "
        "McNemar's score test, Tango's interval), pooled over the families:\n\n"
        + "\n".join(lines) + "\n"
    )  # fmt: skip
    return "".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--families", default="all", help="comma-separated ids, or all")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()
    every = load_families()
    families = (
        list(every.values())
        if args.families == "all"
        else [every[f] for f in args.families.split(",")]
    )
    load = os.getloadavg()[0]
    began = time.strftime("%a %b %d %H:%M UTC", time.gmtime())
    parts = [HEADING + "\n\n"]
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        os.environ.setdefault("PEB_CACHE_DIR", str(tmp / "cache"))
        if not args.skip_cost:
            parts.append(cost(families, args.rounds, tmp) + "\n")
            parts.append(tokens(families, tmp) + "\n")
        if not args.skip_sweep:
            parts.append(study(families, tmp))
    ended = time.strftime("%H:%M UTC", time.gmtime())
    parts.insert(
        1,
        f"Measured {began}-{ended} on this 2-core machine (load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end: other helpers' work shared the cores), "
        f"`bench_interventions.py --rounds {args.rounds}`.\n\n",
    )
    text = "".join(parts)
    write_section(HEADING, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
