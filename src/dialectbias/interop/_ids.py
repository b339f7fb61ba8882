"""Sample ids shared with other harnesses: one string per generation request of an experiment.

`item|variant` then `|key=value` for each request key the request carries (`Task.request_keys`: strategy,
scenario, prefix …), in the task's key order, e.g. `q1|sylhet` or `q1|sylhet|strategy=cot`. `%`, `|` and `=`
inside a part are written `%25`, `%7C` and `%3D`, so any item id survives the round trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dialectbias.errors import DataError

_ESCAPES = (("%", "%25"), ("|", "%7C"), ("=", "%3D"))


def _escape(text: str) -> str:
    for raw, coded in _ESCAPES:
        text = text.replace(raw, coded)
    return text


def _unescape(text: str) -> str:
    for raw, coded in reversed(_ESCAPES):
        text = text.replace(coded, raw)
    return text


def sample_id(item_id: str, variant: str, keys: Mapping[str, Any]) -> str:
    """The id of one request: `item|variant|key=value…` (keys in the order given)."""
    parts = [_escape(item_id), _escape(variant), *(f"{_escape(k)}={_escape(str(v))}" for k, v in keys.items())]
    return "|".join(parts)


def parse_sample_id(text: str, where: str) -> tuple[str, str, dict[str, str]]:
    """(item_id, variant, request keys) of a sample id; DataError naming `where` when it is not one of ours."""
    parts = text.split("|")
    if len(parts) < 2 or not parts[0] or not parts[1] or any("=" not in p for p in parts[2:]):
        raise DataError(f"{where}: sample id {text!r} is not one `dialectbias export` writes "
                        "(item|variant or item|variant|key=value…)")
    keys = {_unescape(k): _unescape(v) for k, v in (p.split("=", 1) for p in parts[2:])}
    return _unescape(parts[0]), _unescape(parts[1]), keys
