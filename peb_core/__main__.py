"""`python -m peb_core`: the `peb` command."""

from .frontends.cli import run

run()
