"""inspect_ai's entry point for this package (`[project.entry-points.inspect_ai]` in
pyproject.toml): the benchmark's task registered as `partial_evidence_bench/partial_evidence`,
so that, with the package installed (the `inspect` extra), from any folder:

    inspect eval partial_evidence_bench/partial_evidence -T tier=hard --model openai/NAME

inspect names a task after the top-level module that defines it, and for a name
`PREFIX/task` loads the entry point called PREFIX: hence this one module, named as the
distribution. The task is `peb_core.frontends.inspect.task.partial_evidence`, with its options (`-T
family=... -T tier=... -T protocol=... -T seeds=...`, and on the agent tier `-T disclosure=...
-T max_steps=... -T corpus_size=...`) as they are."""

from __future__ import annotations

import functools
from typing import Any

import inspect_ai

from peb_core.frontends.inspect import task as inspect_task


@inspect_ai.task
@functools.wraps(inspect_task.partial_evidence, assigned=("__doc__",), updated=())
def partial_evidence(*args: Any, **options: Any) -> inspect_ai.Task:
    return inspect_task.partial_evidence(*args, **options)
