"""The `peb` command line under bad input, as a hostile user would give it: every probe gets
one line on stderr (`peb: error: ...`, naming what was wrong) and exit status 2, never a
traceback, a hang or unbounded work. The real CLI, in processes of its own (`cli.peb_process`,
forked; fresh interpreters where a test is about a process started from scratch)."""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli import PEB, ROOT, peb_process
from scripted_server import BLOCKED, ScriptedServer, Step

from peb_core import BASELINES, load_families, read_manifest, read_records, run_system

ORACLE = ROOT / "runs" / "baselines" / "oracle"

Args = list[str | bytes]
Probe = Callable[[Path, Callable[[Path], None]], tuple[Args, dict[str, str], str]]
"""(a scratch folder, the read_only fixture) -> (arguments, extra environment, needle)."""
PROBES: dict[str, Probe] = {}


def probe(name: str, args: list[str] | None = None, needle: str = "") -> Callable[[Probe], Probe]:
    """Register a probe: either fixed `args` (`{tmp}` in them is the scratch folder) and
    `needle`, or a function making them."""

    def register(make: Probe) -> Probe:
        PROBES[name] = make
        return make

    if args is not None:
        register(lambda tmp, _ro: ([a.replace("{tmp}", str(tmp)) for a in args], {}, needle))
    return register


def _file(tmp: Path) -> str:
    (tmp / "a-file").write_text("not a folder\n")
    return str(tmp / "a-file")


def _run_folder(tmp: Path, **manifest: object) -> str:
    """A copy of a checked-in run, with its manifest fields changed."""
    run = tmp / "run"
    shutil.copytree(ORACLE, run, ignore=shutil.ignore_patterns("scores.*"))
    data = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps({**data, **manifest}))
    return str(run)


def _scenarios(tmp: Path, old: str, new: str | None) -> dict[str, str]:
    """PEB_SCENARIOS_DIR for a copy of the shipped families with one edit to due_diligence_v1:
    `old` replaced by `new`, or (`new` None) the file cut short before `old`."""
    folder = tmp / "scenarios"
    shutil.copytree(ROOT / "scenarios", folder)
    path = folder / "due_diligence_v1.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    edited = text[: text.index(old)] if new is None else text.replace(old, new, 1)
    path.write_text(edited, encoding="utf-8")
    return {"PEB_SCENARIOS_DIR": str(folder)}


# --- inputs that were tracebacks ---------------------------------------------------------------

RUN = ["run", "--system", "oracle", "--family", "due_diligence_v1"]

probe("model_empty", ["run", "--model", "", "--out", "{tmp}/never"], "system ''")
for _model in ("openai/", "openai//x", "agent:openai/"):  # a provider and no model name
    probe(
        f"model_name_empty_{_model}",
        ["run", "--model", _model, "--out", "{tmp}/never"],
        "names no model after its provider",
    )


@probe("out_is_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return [*RUN, "--out", _file(tmp)], {}, "a-file exists and is not a folder"


@probe("out_under_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return [*RUN, "--out", f"{_file(tmp)}/run"], {}, "a-file/run: Not a directory"


@probe("out_read_only")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    (tmp / "locked").mkdir()
    ro(tmp / "locked")
    return [*RUN, "--out", str(tmp / "locked" / "run")], {}, f"{tmp}/locked/run: "


@probe("out_not_utf8")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return [*RUN, "--out", os.fsencode(tmp) + b"/\xff"], {}, "is not UTF-8"


@probe("export_out_a_folder")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return ["tasks", "export", "--out", str(tmp)], {}, "is a folder; expected a file path"


probe("export_out_empty", ["tasks", "export", "--out", ""], "argument --out: expected a path")


@probe("score_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return ["score", _file(tmp)], {}, "a-file: not a run folder"


@probe("compare_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return ["compare", _file(tmp), str(ORACLE)], {}, "a-file: not a run folder"


@probe("responses_a_folder")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    run = _run_folder(tmp)
    os.remove(f"{run}/responses.jsonl")
    os.mkdir(f"{run}/responses.jsonl")
    return ["score", run], {}, "responses.jsonl: is a folder, not a regular file"


@probe("manifest_seed_negative")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    run = _run_folder(tmp, seeds=[-5])
    return ["score", run], {}, "manifest.json: seeds.0: Input should be greater than or equal to 0"


BIG_SEED = 2**63
"""One past the largest seed (a signed 64-bit integer): in a manifest edited by hand."""

for _name, _command in [
    ("score", ["score", "{run}"]),
    ("compare", ["compare", str(ORACLE), "{run}"]),
    ("report", ["report", "--runs", "{run}", "--out", "{tmp}/never"]),
]:

    @probe(f"manifest_seed_2_to_the_63_{_name}")
    def _(
        tmp: Path, ro: Callable[[Path], None], command: list[str] = _command
    ) -> tuple[Args, dict[str, str], str]:
        run = _run_folder(tmp, seeds=[11, BIG_SEED])
        args: Args = [a.replace("{run}", run).replace("{tmp}", str(tmp)) for a in command]
        return args, {}, f"{run}/manifest.json: seeds.1: Input should be less than or equal to"


probe(
    "dataset_seed_2_to_the_63",
    ["dataset", "export", "--seeds", str(BIG_SEED), "--out", "{tmp}/never"],
    f"--seeds: '{BIG_SEED}': seeds are integers >= 0 (at most 2^63-1)",
)

for _name, _port in [("port_negative", "-1"), ("port_too_big", "70000")]:
    probe(
        _name,
        ["local-model", "serve", "--port", _port],
        f"argument --port: expected a port from 1 to 65535, got '{_port}'",
    )
probe(
    "local_model_port_without_serve",
    ["local-model", "status", "--port", "9000"],
    "--port: applies to serve, not status",
)
probe(
    "local_port_zero",
    ["run", "--model", "local/smollm2", "--local-port", "0", "--out", "{tmp}/never"],
    "argument --local-port: expected an integer from 1 to 65,535, got '0'",
)

SCENARIO_DEFECTS = {
    "numbers_reversed": (
        "deal_value = [120, 900]",
        "deal_value = [900, 120]",
        "numbers.deal_value: expected [low, high] with low <= high, got [900, 120]",
    ),
    "unbalanced_brace": (
        '"Advisor memo: {findings}"',
        '"Advisor memo: {findings"',
        "slots[3].bodies[0]: expected '}' before end of string",
    ),
    "empty_placeholder": (
        '"Advisor memo: {findings}"',
        '"Advisor memo: {}"',
        "slots[3].bodies[0]: unknown placeholder {}; expected one of: ",
    ),
    "conversion": (
        '"Advisor memo: {findings}"',
        '"Advisor memo: {findings!x}"',
        "slots[3].bodies[0]: placeholder {findings} takes no conversion or format spec",
    ),
    "format_spec": (
        '"Advisor memo: {findings}"',
        '"Advisor memo: {findings:d}"',
        "slots[3].bodies[0]: placeholder {findings} takes no conversion or format spec",
    ),
    "prose_phrase_for_two_values": (
        'block = ["do not proceed",',
        'block = ["go ahead", "do not proceed",',
        "prose.values.recommendation: the phrase 'go ahead' states both proceed and block",
    ),
    "prose_phrase_for_two_requirements": (
        'deal_overview = ["transaction overview",',
        'deal_overview = ["financials", "transaction overview",',
        "prose.evidence: the phrase 'financials' names both deal_overview and "
        "financial_performance",
    ),
    "prose_phrase_for_two_scopes": (
        'public = ["public sources"]',
        'public = ["public sources", "data room"]',
        "prose.scopes: the phrase 'data room' names both deal_room and public",
    ),
    "prose_unknown_value": (
        "[prose.values.recommendation]\nproceed = [",
        "[prose.values.recommendation]\nproceed_now = [",
        "prose.values.recommendation.proceed_now: not a value of recommendation",
    ),
    "prose_topic_of_no_value": (
        'topics = ["termination rights"]',
        'topics = ["termination rights", "deal fatigue"]',
        "prose.topics[1]: 'deal fatigue' is not a phrasing of any answer value",
    ),
    "negative_canonical_seed": (
        "canonical_seeds = [11, 23, 37, 53]",
        "canonical_seeds = [-1, 23, 37, 53]",
        "canonical_seeds[0]: Input should be greater than or equal to 0 (got -1)",
    ),
}


def _scenario_probe(old: str, new: str, needle: str) -> Probe:
    def make(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
        return ["tasks", "list"], _scenarios(tmp, old, new), f"due_diligence_v1.toml: {needle}"

    return make


for _name, (_old, _new, _needle) in SCENARIO_DEFECTS.items():
    probe(f"scenario_{_name}")(_scenario_probe(_old, _new, _needle))


READ = ["read", "{tmp}/reply.txt", "--family", "security_incident_v1"]


def _reply(tmp: Path, text: bytes = b"Severity: high.") -> None:
    (tmp / "reply.txt").write_bytes(text)


probe(
    "read_missing_file",
    ["read", "{tmp}/no-such-reply.txt", "--family", "security_incident_v1"],
    "no-such-reply.txt: cannot read the reply (No such file or directory)",
)
probe(
    "read_a_folder",
    ["read", "{tmp}", "--family", "security_incident_v1"],
    "is a folder; expected a file path",
)


@probe("read_unknown_family")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    _reply(tmp)
    return (
        [*[a.replace("{tmp}", str(tmp)) for a in READ[:2]], "--family", "x"],
        {},
        "unknown family 'x'",
    )


@probe("read_unknown_task")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    _reply(tmp)
    args = [a.replace("{tmp}", str(tmp)) for a in READ]
    return [*args, "--task", "nope__s1"], {}, "unknown template 'nope'"


@probe("read_not_utf8")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    _reply(tmp, b"Severity: \xff high")
    return [a.replace("{tmp}", str(tmp)) for a in READ], {}, "the reply is not UTF-8 text"


@probe("read_prose_reader_unknown_provider")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    _reply(tmp)
    args = [a.replace("{tmp}", str(tmp)) for a in READ]
    return [*args, "--prose-reader", "nonsense"], {}, "--prose-reader: no provider in model"


@probe("hard_tier_of_a_family_without_one")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return (
        ["tasks", "list", "--tier", "hard"],
        _scenarios(tmp, "\n[hard]\n", None),  # [hard] is the file's last table
        "--tier: family due_diligence_v1 has no hard tier: it declares no [hard] text",
    )


@probe("dataset_of_a_family_without_a_hard_tier")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return (
        ["dataset", "export", "--out", f"{tmp}/never"],
        _scenarios(tmp, "\n[hard]\n", None),
        "family due_diligence_v1 has no hard tier: it declares no [hard] text; choose --tier paper",
    )


@probe("dataset_out_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return ["dataset", "export", "--out", _file(tmp)], {}, "a-file exists and is not a folder"


@probe("dataset_out_not_empty")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    _file(tmp)
    return ["dataset", "export", "--out", str(tmp)], {}, f"--out: {tmp} is not empty; choose a new"


@probe("dataset_out_read_only")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    (tmp / "locked").mkdir()
    ro(tmp / "locked")
    out = tmp / "locked" / "dataset"
    return ["dataset", "export", "--out", str(out)], {}, f"--out: cannot write to {out} ("


probe("dataset_out_empty", ["dataset", "export", "--out", ""], "argument --out: expected a path")
probe(
    "dataset_tier_unknown",
    ["dataset", "export", "--tier", "easy", "--out", "{tmp}/never"],
    "argument --tier: unknown tier 'easy'; valid: paper, hard, agent",
)

# --- unbounded work ----------------------------------------------------------------------------

probe(
    "seeds_ten_million",
    ["tasks", "list", "--seeds", "0-10000000"],
    "--seeds: '0-10000000' brings the seeds to more than 100,000; at most --max-tasks",
)
probe(
    "tasks_beyond_max",
    ["tasks", "export", "--seeds", "0-20000", "--out", "{tmp}/never.jsonl"],
    "840,042 tasks asked for, more than --max-tasks (100,000)",
)
probe(
    "max_tasks_lowered",
    [*RUN, "--seeds", "11,23", "--max-tasks", "10", "--out", "{tmp}/never"],
    "12 tasks asked for, more than --max-tasks (10)",
)
probe(
    "dataset_both_tiers_beyond_max",
    ["dataset", "export", "--max-tasks", "300", "--out", "{tmp}/never"],
    "tasks asked for, more than --max-tasks (300)",
)
probe(
    "distractors_million",
    ["tasks", "list", "--distractors", "1000000"],
    "argument --distractors: expected an integer from 0 to 50",
)

# --- values that were taken for something else -------------------------------------------------

for _flag, _value, _needle in [
    ("--timeout", "nan", "a finite number from 0.001 to 86400, got 'nan'"),
    ("--timeout", "inf", "a finite number from 0.001 to 86400, got 'inf'"),
    ("--temperature", "nan", "a finite number from 0 to 10, got 'nan'"),
    ("--concurrency", "0", "an integer from 1 to 1,024, got '0'"),
    ("--out", "", "a path, got ''"),
]:
    probe(
        f"{_flag[2:]}_{_value or 'empty'}",
        [*RUN, "--out", "{tmp}/never", _flag, _value],
        f"argument {_flag}: expected {_needle}",
    )
probe(
    "api_base_empty",
    ["run", "--model", "openai/x", "--api-base", "", "--out", "{tmp}/never"],
    "argument --api-base: expected an http(s) URL such as http://HOST:PORT/v1",
)
probe(
    "max_steps_for_a_one_shot_model",
    ["run", "--model", "openai/x", "--max-steps", "3", "--out", "{tmp}/never"],
    "--max-steps applies to agent models only",
)
probe(
    "max_steps_zero",
    ["run", "--model", "agent:openai/x", "--max-steps", "0", "--out", "{tmp}/never"],
    "argument --max-steps: expected an integer from 1 to 1,000, got '0'",
)
probe(
    "agent_protocol_without_agent_text",
    ["run", "--model", "agent:openai/x", "--protocol", "boundary_metadata@1", "--tier", "agent",
     "--out", "{tmp}/never"],
    "protocol boundary_metadata@1 has no agent rendering",
)  # fmt: skip
probe(
    "agent_without_a_model",
    ["run", "--model", "agent:", "--out", "{tmp}/never"],
    "system 'agent:' is neither a baseline",
)
probe(
    "seeds_empty",
    ["tasks", "list", "--seeds", ""],
    "argument --seeds: expected a seed list such as 11,23 or 400-439, got ''",
)
probe("family_only_commas", ["tasks", "list", "--family", ",,"], "--family: no family named")
probe(
    "seeds_negative", ["tasks", "list", "--seeds", "-5"], "--seeds: '-5': seeds are integers >= 0"
)
probe(
    "corpus_size_on_a_tier_without_corpora",
    ["tasks", "list", "--corpus-size", "40"],
    "--corpus-size: the paper tier has no corpus; choose --tier agent",
)
probe(
    "corpus_size_too_big",
    ["tasks", "list", "--tier", "agent", "--corpus-size", "501"],
    "--corpus-size: corpus size 501: the agent tier takes an integer from 20 to 500",
)
probe(
    "corpus_size_not_a_number",
    ["tasks", "list", "--tier", "agent", "--corpus-size", "many"],
    "argument --corpus-size: expected an integer from 1 to 100,000, got 'many'",
)
probe(
    "corpus_size_show_paper_task",
    ["tasks", "show", "hidden_liability_annex__s11", "--corpus-size", "40"],
    "--corpus-size: the paper tier takes no corpus size; tiers with corpora: agent",
)
probe(
    "disclosure_unknown",
    ["run", "--system", "agent_silent", "--disclosure", "loud", "--out", "{tmp}/never"],
    "argument --disclosure: unknown disclosure 'loud'; valid: silent, counted, named",
)
probe(
    "disclosure_for_a_one_shot_system",
    [*RUN, "--disclosure", "named", "--out", "{tmp}/never"],
    "--disclosure: oracle reads no agent view (--disclosure applies to agent systems",
)

probe(
    "followup_for_a_one_shot_system",
    [*RUN, "--followup", "pressure", "--out", "{tmp}/never"],
    "--followup applies to agent systems",
)
probe(
    "followup_on_a_tier_without_tools",
    [
        "run",
        "--system",
        "agent_cave",
        "--tier",
        "paper",
        "--followup",
        "pressure",
        "--out",
        "{tmp}/n",
    ],
    "--followup: the paper tier has no corpus",
)
probe(
    "followup_unknown",
    ["run", "--system", "agent_cave", "--followup", "nag", "--out", "{tmp}/never"],
    "argument --followup: unknown follow-up 'nag'; valid: none, pressure",
)


@probe("score_family_not_covered")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    run = tmp / "dd"
    run_system(BASELINES["oracle"], [load_families()["due_diligence_v1"]], run, seeds=[11])
    return (
        ["score", str(run), "--family", "procurement_v1"],
        {},
        "--family: no given run covers procurement_v1; they cover due_diligence_v1",
    )


probe(
    "score_unknown_column",
    ["score", str(ORACLE), "--columns", "run,unsafe_rate"],
    "--columns: unknown unsafe_rate; valid: run, run_label, system, protocol, tier, interface, "
    "disclosure, contract, followup, max_steps, family, repeats, status, n,",
)


probe(
    "score_column_twice",
    ["score", str(ORACLE), "--columns", "run,family,run"],
    "--columns: run given more than once",
)
probe("schema_empty_name", ["schema", ""], "unknown schema ''; valid: Task, ModelView, ")
for _name, _url, _why in [
    ("port_out_of_range", "http://127.0.0.1:99999/v1", "99999"),
    ("port_not_a_number", "http://127.0.0.1:abc/v1", "abc"),
    ("port_zero", "http://127.0.0.1:0/v1", ":0/"),
]:
    probe(
        f"api_base_{_name}",
        ["run", "--model", "openai/x", "--api-base", _url, "--out", "{tmp}/never"],
        f"argument --api-base: expected an http(s) URL such as http://HOST:PORT/v1 (a port from "
        f"1 to 65535), got '{_url}'",
    )


@probe("local_model_pid_file_a_folder")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    (tmp / "cache" / "local" / "smollm2.pid").mkdir(parents=True)
    return ["local-model", "status"], {}, "local/smollm2.pid: is not a file; remove it"


@probe("cache_dir_a_file")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return (
        ["local-model", "stop", "gemma3-270m"],
        {"PEB_CACHE_DIR": _file(tmp)},
        "a-file/local: cannot create the embedded models' folder (Not a directory); point "
        "PEB_CACHE_DIR at a folder",
    )


probe(
    "import_inspect_log_a_folder",
    ["import", "inspect", "{tmp}", "--out", "{tmp}/never"],
    "argument LOG: ",
)
probe("import_inspect_no_format", ["import", "--out", "{tmp}/never"], "argument import_command")
if importlib.util.find_spec("inspect_ai"):  # the `inspect` extra; tests/test_inspect.py has more
    probe(
        "import_inspect_missing_log",
        ["import", "inspect", "{tmp}/missing.eval", "--out", "{tmp}/never"],
        "missing.eval: no such file",
    )

    @probe("import_inspect_log_a_fifo")
    def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
        os.mkfifo(tmp / "pipe.eval")  # never opened: a FIFO would be waited on
        return (
            ["import", "inspect", str(tmp / "pipe.eval"), "--out", str(tmp / "never")],
            {},
            "pipe.eval: is a FIFO, not a regular file; give an inspect eval log (.eval or .json)",
        )


AUDIT = ["audit", "shortcuts", "--family", "due_diligence_v1", "--tier", "paper"]
probe("audit_no_subcommand", ["audit"], "required: audit_command")
probe(
    "audit_train_seeds_not_seeds",
    [*AUDIT, "--train-seeds", "x"],
    "argument --train-seeds: 'x' is not an integer or a range",
)
probe(
    "audit_test_seeds_negative",
    [*AUDIT, "--test-seeds", "-3"],
    "argument --test-seeds: '-3': seeds are integers >= 0",
)
probe(
    "audit_seeds_overlap",
    [*AUDIT, "--train-seeds", "0-9", "--test-seeds", "5-20"],
    "--test-seeds: 5 of them are training seeds too (e.g. 5); held-out seeds must differ",
)
probe(
    "audit_too_many_seeds",
    [*AUDIT, "--train-seeds", "0-99999", "--test-seeds", "100000-100009"],
    "ask for up to 600,060 tasks a family, more than 100,000",
)
probe("audit_tier_unknown", [*AUDIT, "--tier", "medium"], "argument --tier: unknown tier 'medium'")
probe("audit_family_unknown", ["audit", "shortcuts", "--family", "x"], "unknown family 'x'")
probe("audit_top_zero", [*AUDIT, "--top", "0"], "argument --top: expected an integer from 1 to")


@probe("audit_hard_tier_of_a_family_without_one")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    return (
        ["audit", "shortcuts", "--tier", "hard"],
        _scenarios(tmp, "\n[hard]\n", None),
        "--tier: no hard tier in due_diligence_v1; choose another tier or other families",
    )


@probe("audit_without_scikit_learn")
def _(tmp: Path, ro: Callable[[Path], None]) -> tuple[Args, dict[str, str], str]:
    shadow = tmp / "shadow" / "sklearn"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("scikit-learn is hidden here")\n')
    path = os.pathsep.join([str(tmp / "shadow"), os.environ.get("PYTHONPATH", "")])
    return (
        [*AUDIT],
        {"PYTHONPATH": path},
        "the shortcut audit needs scikit-learn: pip install 'partial-evidence-bench[audit]'",
    )


# Numbers are ASCII digits; a name with a control character is shown escaped, on one line.
for _flag, _value, _needle in [
    ("--seeds", "\u0661\u0661", "argument --seeds: '\u0661\u0661' is not an integer or a range"),
    (
        "--limit",
        "\u0661",
        "argument --limit: expected an integer from 1 to 10,000,000, got '\u0661'",
    ),
    ("--concurrency", "\uff18", "argument --concurrency: expected an integer from 1 to 1,024"),
    (
        "--temperature",
        "\u0660.\u0665",
        "argument --temperature: expected a finite number from 0 to 10",
    ),
]:
    probe(f"non_ascii_digits_{_flag}", [*RUN, "--out", "{tmp}/never", _flag, _value], _needle)
probe("score_a_name_with_a_newline", ["score", "{tmp}/a\nb"], "/a\\nb: not a run folder")
probe("score_a_name_with_a_tab", ["score", "{tmp}/a\tb"], "/a\\tb: not a run folder")


def _sweep(tmp: Path, text: str) -> list[str | bytes]:
    """`peb sweep` of a sweep file holding `text`, into `{tmp}/never`."""
    (tmp / "s.toml").write_text(text, encoding="utf-8")
    return ["sweep", str(tmp / "s.toml"), "--out", str(tmp / "never")]


ONE = '[matrix]\nsystem = ["oracle"]\n'
SWEEP_PROBES = {
    "matrix_unknown_key": (f"{ONE}bogus = [1]\n", "s.toml: matrix.bogus: not a run option; valid:"),
    "matrix_varies_concurrency": (
        f"{ONE}concurrency = [1, 2]\n",
        "matrix.concurrency: concurrency is not part of what a run is",
    ),
    "budget_a_boolean": (
        f"concurrency = true\n{ONE}",
        "concurrency: Input should be a valid integer",
    ),
    "budget_text": (f'concurrency = "8"\n{ONE}', "concurrency: Input should be a valid integer"),
    "base_count_text": (
        f'[base]\nconcurrency = "8"\n{ONE}',
        "base.concurrency: expected an integer",
    ),
    "base_switch_text": (f'[base]\ncache = "off"\n{ONE}', "base.cache: expected true or false"),
    "limits_text": (f'[limits]\nbaseline = "2"\n{ONE}', "limits.baseline: Input should be"),
    "limits_unknown_provider": (
        f"[limits]\nopneai = 2\n{ONE}",
        "limits.opneai: no run of this sweep goes to provider 'opneai'; its runs go to: baseline",
    ),
    "key_unknown": (f"bogus = 1\n{ONE}", "bogus: not a key of a sweep file; valid: concurrency,"),
}


def _sweep_probe(text: str, needle: str) -> Probe:
    return lambda tmp, _ro: (_sweep(tmp, text), {}, needle)


for _name, (_text, _needle) in SWEEP_PROBES.items():
    probe(f"sweep_{_name}")(_sweep_probe(_text, _needle))


def _listing(tmp: Path, runs: object) -> list[str | bytes]:
    """`peb score` of a sweep's folder whose sweep.json lists `runs`."""
    (tmp / "sweep").mkdir()
    (tmp / "sweep" / "sweep.json").write_text(json.dumps({"runs": runs}))
    return ["score", str(tmp / "sweep")]


LISTINGS = {
    "empty": ([], "sweep.json: lists no run"),
    "absolute": ([{"folder": str(ORACLE)}], "runs/baselines/oracle', outside the sweep's folder"),
    "up": ([{"folder": "../run"}], "lists '../run', outside the sweep's folder"),
    "nul": ([{"folder": "a\x00b"}], "lists 'a\\x00b', not a folder's path inside the sweep"),
    "unmade": ([{"folder": "never"}], "no run its sweep.json lists was made"),
    "not_runs": ({"folder": "x"}, "not a sweep's listing"),
}


def _listing_probe(runs: object, needle: str) -> Probe:
    return lambda tmp, _ro: (_listing(tmp, runs), {}, needle)


for _name, (_runs, _needle) in LISTINGS.items():
    probe(f"sweep_listing_{_name}")(_listing_probe(_runs, _needle))


@pytest.mark.parametrize("name", list(PROBES))
def test_bad_input_is_one_line_and_exit_2(
    name: str, tmp_path: Path, read_only: Callable[[Path], None]
) -> None:
    args, env, needle = PROBES[name](tmp_path, read_only)
    result = peb_process(*args, env={"PEB_CACHE_DIR": str(tmp_path / "cache"), **env})
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("peb: error: ") and needle in lines[0], lines[0]
    assert not (tmp_path / "never").exists() and not (tmp_path / "never.jsonl").exists()


# --- faults in the middle of a run -------------------------------------------------------------


FILE_SIZE = {resource.RLIMIT_FSIZE: (20_000, 20_000)}
"""A file may grow to 20 kB, after which a write fails (EFBIG: Python ignores SIGXFSZ) as it
would on a full disk (ENOSPC), possibly leaving a torn line."""


def test_a_full_disk_mid_run_is_one_line_and_the_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {"PEB_CACHE_DIR": str(tmp_path / "cache")}
    full = peb_process("run", "--system", "oracle", "--out", str(out), env=env, limits=FILE_SIZE)
    assert full.returncode == 2
    assert full.stderr.splitlines()[-1] == f"peb: error: {out}: File too large"
    assert "Traceback" not in full.stderr
    written = len((out / "responses.jsonl").read_bytes())
    assert 10_000 < written <= 20_000

    again = peb_process("run", "--system", "oracle", "--out", str(out), env=env)
    assert again.returncode == 0, again.stderr
    records, problems = read_records(out / "responses.jsonl")
    assert problems == [] and len(records) == 168 == len({r.task_id for r in records})
    if (out / "responses.jsonl.torn").exists():  # the write was cut mid-line
        assert ": torn last line (" in again.stderr


@pytest.fixture
def slow_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer().start()
    server.script.default = Step(text=BLOCKED, delay=0.3)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT], ids=lambda s: s.name
)
def test_ctrl_c_is_one_line_and_keeps_what_was_recorded(
    slow_server: ScriptedServer, tmp_path: Path, stop: signal.Signals
) -> None:
    """Ctrl-C, and the signals that stop a process as a service manager or a closed terminal
    does: one line, exit 130, what was recorded kept and the manifest `interrupted` (never left
    `running`)."""
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [
            *PEB,
            "run",
            "--model",
            "openai/scripted",
            "--api-base",
            slow_server.url,
            "--family",
            "due_diligence_v1",
            "--concurrency",
            "2",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env={**os.environ, "PEB_CACHE_DIR": str(tmp_path / "cache")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # a process start takes 30 s and more on a loaded machine
    while time.monotonic() < deadline and not (out / "responses.jsonl").exists():
        time.sleep(0.05)
    while time.monotonic() < deadline and len(read_records(out / "responses.jsonl")[0]) < 2:
        time.sleep(0.05)
    proc.send_signal(stop)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == (
        "peb: interrupted (a run keeps what it recorded; the same command resumes it)"
    )
    assert "Traceback" not in stderr
    records, problems = read_records(out / "responses.jsonl")
    assert problems == [] and 2 <= len(records) < 24
    assert read_manifest(out).state == "interrupted"


def _as_a_user(args: Args, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`peb args` with the permissions of a user: for root, without the capabilities that
    let it read and search any folder (util-linux `setpriv`); the test is skipped without it."""
    if os.geteuid() != 0:
        return peb_process(*args, env=env)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root reads any folder, and setpriv (util-linux) is not available")
    return subprocess.run(
        [setpriv, "--bounding-set=-dac_override,-dac_read_search", *PEB, *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_report_over_a_folder_it_cannot_read_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    shutil.copytree(ORACLE, locked / "run", ignore=shutil.ignore_patterns("scores.*"))
    locked.chmod(0o000)
    try:
        for runs in (locked, locked / "run"):
            result = _as_a_user(
                ["report", "--runs", str(runs), "--out", str(tmp_path / "never")],
                {"PEB_CACHE_DIR": str(tmp_path / "cache")},
            )
            assert (result.returncode, result.stdout) == (2, ""), result.stderr
            assert result.stderr == (
                f"peb: error: --runs: {runs}: cannot read (Permission denied)\n"
            ), result.stderr
    finally:
        locked.chmod(0o755)
    assert not (tmp_path / "never").exists()


# --- exports that fail, are killed, or are pointed at the working folder -----------------------


def test_a_full_disk_in_dataset_export_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "release"
    result = peb_process(
        "dataset",
        "export",
        "--out",
        str(out),
        env={"PEB_CACHE_DIR": str(tmp_path / "cache")},
        limits=FILE_SIZE,
    )
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr == f"peb: error: --out: cannot write to {out} (File too large)\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == []


def test_a_failed_tasks_export_leaves_the_file_it_would_replace(tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    env = {"PEB_CACHE_DIR": str(tmp_path / "cache")}
    small = peb_process("tasks", "export", "--seeds", "11", "--out", str(out), env=env)
    assert small.returncode == 0, small.stderr
    good = out.read_bytes()
    full = peb_process("tasks", "export", "--out", str(out), env=env, limits=FILE_SIZE)
    assert (full.returncode, full.stdout) == (2, ""), full.stderr
    assert full.stderr == f"peb: error: --out: cannot write to {out} (File too large)\n"
    assert out.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["tasks.jsonl"]


def test_a_tasks_export_onto_a_read_only_mount_is_one_line(tmp_path: Path) -> None:
    """A read-only file system refuses the temporary file and then its cleanup's unlink too
    (EROFS comes before the lookup): one line, exit 2, not a traceback from the cleanup."""
    mount = tmp_path / "ro"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode:
        pytest.skip(f"cannot mount a read-only tmpfs here: {made.stderr.decode().strip()}")
    try:
        out = mount / "tasks.jsonl"
        result = peb_process(
            "tasks",
            "export",
            "--seeds",
            "11",
            "--out",
            str(out),
            env={"PEB_CACHE_DIR": str(tmp_path / "cache")},
        )
    finally:
        subprocess.run(["umount", str(mount)], check=True)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr == f"peb: error: --out: cannot write to {out} (Read-only file system)\n"


def test_a_killed_dataset_export_leaves_no_scratch_folder_behind(tmp_path: Path) -> None:
    """kill -9 leaves the export's hidden scratch folder; the next export removes it (its pid
    is gone) and completes."""
    out = tmp_path / "release"
    env = {**os.environ, "PEB_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [*PEB, "dataset", "export", "--seeds", "0-199", "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    scratch = tmp_path / f".release.{proc.pid}.tmp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (scratch / "data").exists():
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    assert scratch.is_dir() and not out.exists()

    again = peb_process("dataset", "export", "--seeds", "11", "--out", str(out), env=env)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["release"]


def test_dataset_export_into_the_empty_working_folder_fills_that_folder(tmp_path: Path) -> None:
    """`--out .` in an empty folder writes into it: the folder under the user's shell stays
    the same folder (not replaced by another of the same name)."""
    here = tmp_path / "here"
    here.mkdir()
    inode = here.stat().st_ino
    result = subprocess.run(
        [*PEB, "dataset", "export", "--seeds", "11", "--out", "."],
        cwd=here,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PEB_CACHE_DIR": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert here.stat().st_ino == inode
    assert sorted(p.name for p in here.iterdir()) == ["README.md", "data"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["here"]
