"""Problems met and handled on the way (a torn line set aside, a cache given up): reported as
Python warnings of one category, which the CLI prints as one `peb: warning:` line each."""

from __future__ import annotations

import warnings


class PebWarning(UserWarning):
    """Something went wrong and was handled; the message is one line naming what."""


def warn(message: str) -> None:
    warnings.warn(message, PebWarning, stacklevel=3)
