"""`python -m peb_core.cli`: the `peb` command."""

from . import run

run()
