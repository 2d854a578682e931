"""What a row of the per-task frames is of: a task, by its family and its id."""

KEY = ["family", "task_id"]
"""The columns that name a task in every per-task frame and in the columns each stage adds."""
