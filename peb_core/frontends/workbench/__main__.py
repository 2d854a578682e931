"""`python -m peb_core.frontends.workbench NOTEBOOK [--port N] [--headless] [-- ARGS]`: serve a
notebook to this machine's browser only (see `_serve`); what `./dev workbench` runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._argv import PORT
from ._serve import serve


def main() -> None:
    argv = sys.argv[1:]
    notebook_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(prog="python -m peb_core.frontends.workbench", description=__doc__)
    p.add_argument("notebook", type=Path, help="e.g. notebooks/workbench.py")
    p.add_argument("--port", type=PORT, help="default: the first free one from 2718")
    p.add_argument("--headless", action="store_true", help="do not open a browser")
    args = p.parse_args(argv)
    if not args.notebook.is_file():
        p.error(f"{args.notebook}: no such notebook")
    serve(args.notebook, port=args.port, browser=not args.headless, args=notebook_args)


if __name__ == "__main__":
    main()
