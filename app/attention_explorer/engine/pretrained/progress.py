"""Progress reports and cancelling for long loads, so a window can show a bar and a Cancel button.

A progress callback is `progress(fraction, text) -> bool`: `fraction` runs from 0 to 1, `text` says
what is happening in a few words. Returning False cancels (the loader raises Cancelled); returning
True or None goes on, so a callback that only shows the bar need not return anything.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[float, str], "bool | None"]


class Cancelled(Exception):  # noqa: N818  (the user's own choice, not an error)
    """The progress callback asked to stop; nothing was changed."""


def report(progress: Progress | None, fraction: float, text: str) -> None:
    """Tell `progress` how far we are; raise Cancelled if it answers False."""
    if progress is not None and progress(min(max(fraction, 0.0), 1.0), text) is False:
        raise Cancelled(f"cancelled while {text}")
