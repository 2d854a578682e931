"""The defaults of a model system, in one place: `build_system`, `ModelSystem`, the CLI, the
inspect task and the workbench all take them from here."""

DEFAULT_PROTOCOL = "structured_gap@1"
"""The prompt protocol a model runs under unless told otherwise (`_prompts.PROTOCOLS`)."""
DEFAULT_TEMPERATURE = 0.0
"""Sampling temperature: greedy, so a rerun asks for the same reply."""
DEFAULT_MAX_TOKENS = 1024
"""The longest reply asked for, in tokens."""
DEFAULT_TIMEOUT_S = 120.0
"""The per-request timeout, in seconds."""
