"""A task's documents as a display frame: which the view holds, and the tracker's boundary
sentence."""

from __future__ import annotations

import polars as pl

from peb_core.tasks import boundary_sentence, documents_frame, generate_tasks, load_families

TASKS = generate_tasks(load_families().values(), [11, 23, 401])


def test_documents_frame_marks_the_boundary_sentence() -> None:
    families = load_families()
    for task in TASKS:
        docs = documents_frame(task, families[task.family])
        tracker = docs.filter(pl.col("boundary_signal"))
        assert tracker.height == 1 and tracker["role"].item() == "tracker"
        sentence = boundary_sentence(task, families[task.family])
        assert sentence is not None and sentence in tracker["body"].item()
        assert tracker["boundary_text"].item() == sentence
        scope = families[task.family].template(task.template).material.scope
        assert scope in sentence
    assert documents_frame(TASKS[0])["boundary_text"].null_count() == 6
