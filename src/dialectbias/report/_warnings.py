"""Third-party warnings while a report is built (issue 24 item 6): one clear line each, never a raw dump.

Libraries the report uses (matplotlib, pandas, numpy) warn through Python's `warnings`; printed raw, a
warning is a file path, a line number and a source line, e.g. matplotlib's `UserWarning: Glyph 2453 missing
from font(s) DejaVu Sans.` in the middle of the command's output. `report_warnings` collects them while the
report is built: each distinct one becomes a line naming its source package (`matplotlib (UserWarning): Glyph
2453 missing from font(s) DejaVu Sans.`, with a count when repeated), which `dialectbias report` prints as a
warning. Deprecation notices (DeprecationWarning, PendingDeprecationWarning, FutureWarning) of third-party
code are dropped: they speak to that code's authors, never about the report. A warning dialectbias itself
raises is shown as before (Python's own display), untouched.

The source is the module that called `warnings.warn`, read from the stack when the warning is shown: the
file a warning names can be ours although a library raised it (matplotlib attributes its warnings to the
first caller outside matplotlib, e.g. `report/_plots.py`).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

#: third-party warning categories dropped while a report is built (not about the report)
HARMLESS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
OWN_PACKAGE = "dialectbias"


def _source(frame: FrameType | None) -> str:
    """The top-level package of the code that called `warnings.warn` (the first frame outside `warnings`
    and this module), "?" when the stack does not say."""
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name not in ("warnings", "_py_warnings", __name__):
            return name.split(".")[0] or "?"
        frame = frame.f_back
    return "?"


@contextmanager
def report_warnings() -> Iterator[list[str]]:
    """Collect third-party warnings raised inside the block; the yielded list holds, once it exits, one line
    per distinct warning (`<package> (<category>): <message>`, ` [n×]` when repeated), in order of first
    appearance. dialectbias's own warnings are shown as usual; third-party deprecation notices are dropped."""
    seen: dict[tuple[str, str, str], int] = {}
    lines: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        shown = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
            source = _source(sys._getframe(1))
            if source == OWN_PACKAGE:
                shown(message, category, filename, lineno, file, line)
            elif not issubclass(category, HARMLESS):
                text = " ".join(str(message).split()) or category.__name__
                key = (source, category.__name__, text)
                seen[key] = seen.get(key, 0) + 1

        setattr(warnings, "showwarning", show)  # noqa: B010 (restored by catch_warnings)
        yield lines
    lines += [f"{source} ({category}): {text}" + (f" [{n}×]" if n > 1 else "")
              for (source, category, text), n in seen.items()]
