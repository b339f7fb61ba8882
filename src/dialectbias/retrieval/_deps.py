"""The optional `retrieval` extra: one clear message when a package of it is missing. Each module imports its
package inside a function (`try: import bm25s / except ImportError as exc: raise missing(...)`), so the rest of
dialectbias works without the extra."""

from __future__ import annotations

from dialectbias.errors import ConfigError


def missing(module: str, what: str, exc: ImportError, extra: str = "retrieval") -> ConfigError:
    """The error for a missing optional package, naming the extra to install."""
    return ConfigError(f"{what} needs the package {module!r} ({exc}); install it with: "
                       f"pip install 'dialectbias[{extra}]'")
