"""User-facing errors: every one names the file, row, key or model at fault."""

from __future__ import annotations

import difflib
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class DialectBiasError(Exception):
    """An error the CLI prints as one clear message (no traceback) and exits non-zero."""


class ConfigError(DialectBiasError):
    """The experiment file is invalid."""


class DataError(DialectBiasError):
    """A dataset file or row is invalid."""


class StoreError(DialectBiasError):
    """The run store cannot be opened or is from an incompatible version."""


#: how the error of every request that does not fit its model's context begins, after the model's name
#: (`providers._fit`; `status` counts failed requests by it)
CONTEXT_FAULT = "does not fit the context"


class ProviderError(DialectBiasError):
    """A model call failed.

    `retryable` marks transient failures (429, 5xx, timeouts, connection resets);
    `retry_after` is the server's Retry-After hint in seconds, when it sent one;
    `unreachable` marks a call that reached no server at all (connection refused, unknown host);
    `fatal` marks a model that cannot answer any more (its in-process engine died): the run stops it.
    `context` marks a request that does not fit the model's context window (found before sending, or the
    server's 400 saying so): never retried within a run, no sign of the server's health, counted apart.
    """

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None,
                 status: int | None = None, unreachable: bool = False, fatal: bool = False,
                 context: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal
        self.context = context
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.unreachable = unreachable


def validation_problems(exc: ValidationError, prefix: str | tuple[Any, ...] = (), node: Any = None, *,
                        skip: Collection[str] = (), known: Collection[str] | None = None) -> list[str]:
    """One `  - key.path (line N): message` line per pydantic error, for file errors.

    `prefix`: the key path of the validated data in its file (a string is one key); `node`: the file's YAML
    node tree (`yaml.compose`), for the `(line N)` of each key; `skip`: top-level keys whose errors were
    already reported; `known`: the valid keys directly under `prefix`, named (with a close match) when an
    unknown key is found there."""
    prefix = ((prefix,) if prefix else ()) if isinstance(prefix, str) else tuple(prefix)
    lines = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        if loc and loc[0] in skip:
            continue
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = _unknown_key(loc[-1], known if len(loc) == len(prefix) + 1 else None)
        lines.append(problem_line(loc, msg, node))
    return lines


def problem_line(loc: tuple[Any, ...], msg: str, node: Any = None) -> str:
    """`  - key.path (line N): msg`, one problem of a file error; the line from the YAML node tree `node`."""
    line = yaml_line(node, loc) if node is not None else None
    return f"  - {'.'.join(str(p) for p in loc) or '(top level)'}{f' (line {line})' if line else ''}: {msg}"


def _unknown_key(key: Any, known: Collection[str] | None) -> str:
    if not known:
        return "unknown key (check the spelling)"
    close = difflib.get_close_matches(str(key), list(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key ({hint}known: {', '.join(known)})"


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


def packaged_or_user_text(path: str | Path | None, default_name: str,
                          error: type[DialectBiasError]) -> tuple[str, str]:
    """(source description, text) of a user's file, or of the packaged `resources/<default_name>` when
    `path` is None; the source heads every error about the file."""
    if path is None:
        from importlib import resources

        text = (resources.files("dialectbias") / "resources" / default_name).read_text(encoding="utf-8")
        return f"dialectbias/resources/{default_name} (package data)", text
    p = Path(path).expanduser()
    return str(p), read_text_file(p, error)
