"""User-facing errors: every one names the file, row, key or model at fault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError


class DialectBiasError(Exception):
    """An error the CLI prints as one clear message (no traceback) and exits non-zero."""


class ConfigError(DialectBiasError):
    """The experiment file is invalid."""


class DataError(DialectBiasError):
    """A dataset file or row is invalid."""


class StoreError(DialectBiasError):
    """The run store cannot be opened or is from an incompatible version."""


class ProviderError(DialectBiasError):
    """A model call failed.

    `retryable` marks transient failures (429, 5xx, timeouts, connection resets);
    `retry_after` is the server's Retry-After hint in seconds, when it sent one;
    `unreachable` marks a call that reached no server at all (connection refused, unknown host).
    """

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None,
                 status: int | None = None, unreachable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.unreachable = unreachable


def validation_problems(exc: ValidationError, prefix: str = "", node: Any = None) -> list[str]:
    """One `  - key.path: message` line per pydantic error (unknown keys called out), for file errors.

    `node`, the YAML node tree (`yaml.compose`) the validated data came from, adds `(line N)` of each key."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in ((prefix,) if prefix else ()) + tuple(err["loc"]))
        msg = "unknown key (check the spelling)" if err["type"] == "extra_forbidden" else err["msg"]
        where = yaml_line(node, tuple(err["loc"])) if node is not None else None
        lines.append(f"  - {loc or '(top level)'}{f' (line {where})' if where else ''}: {msg}")
    return lines


def yaml_line(node: Any, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line number of a key path in a YAML node tree (`yaml.compose`), for error messages."""
    import yaml

    line = None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(key)), None)
            if match is None:
                key_node = next((k for k, _ in node.value if k.value == str(key)), None)
                return key_node.start_mark.line + 1 if key_node else line
            line = next(k.start_mark.line + 1 for k, v in node.value if k.value == str(key))
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


def read_text_file(path: Path, error: type[DialectBiasError], what: str = "file") -> str:
    """A user's UTF-8 text file, or `error` naming it: not found, or not UTF-8 (with the byte at fault)."""
    if not path.is_file():
        raise error(f"{path}: {what} not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
