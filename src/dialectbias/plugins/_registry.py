"""The one registry of plug-ins: kind -> name -> "module:attr" (or the object itself), filled lazily.

Entries come from two places:

- entry points of installed distributions, group `dialectbias.<kind>` (our own built-ins are declared the
  same way, in the package's `pyproject.toml`): read once, the first time any kind is asked for; a target is
  imported only when it is resolved;
- `register(kind, name, target)` from code, which overrides an entry point of the same name.

This module imports only the standard library and `dialectbias.errors`, so anything may import it.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from dialectbias.errors import ConfigError, DialectBiasError

#: plug-in kind -> how one of them is called in messages
KINDS: dict[str, str] = {
    "tasks": "task",
    "providers": "provider",
    "executors": "executor",
    "review_kinds": "review queue kind",
    "rubrics": "rubric",
}
#: entry-point groups are `GROUP_PREFIX + kind`
GROUP_PREFIX = "dialectbias."
#: the distribution whose entry points are the built-ins
HOME = "dialectbias"
#: where an entry registered by `register` comes from
CODE = "register() in code"


class UnknownPluginError(ConfigError):
    """No plug-in of this kind has this name; the message names the kind, the name and the known names."""


class PluginLoadError(DialectBiasError):
    """A plug-in was found but its target does not load (an import error, a missing attribute, the wrong
    type); the message names the kind, the name, the distribution that declared it and its "module:attr"."""


@dataclass(frozen=True)
class Entry:
    """One registered plug-in: what it is (`kind`, `name`), what to load (`target`: "module:attr", or the object
    itself when registered from code) and who declared it (`source`: "DIST VERSION", or `CODE`)."""

    kind: str
    name: str
    target: object
    source: str

    @property
    def where(self) -> str:
        """`from distribution foo 1.0 (foo.mod:Cls)`, for messages."""
        what = self.target if isinstance(self.target, str) else _qualname(self.target)
        origin = self.source if self.source == CODE else f"distribution {self.source}"
        return f"from {origin} ({what})"


def _qualname(obj: object) -> str:
    owner = obj if isinstance(obj, type) or callable(obj) else type(obj)
    return f"{getattr(owner, '__module__', '?')}:{getattr(owner, '__qualname__', repr(obj))}"


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown plug-in kind {kind!r}; kinds: {', '.join(KINDS)}")


def scan_entry_points() -> Iterable[tuple[str, str, str, str]]:
    """(kind, name, "module:attr", "DIST VERSION") of every `dialectbias.<kind>` entry point installed: the
    built-ins first, then each other distribution's in sys.path order. A distribution found twice on sys.path
    counts once (its first copy), as `importlib.metadata.entry_points` does. Only distributions whose
    entry_points.txt names one of our groups have their metadata read."""
    groups = {GROUP_PREFIX + kind: kind for kind in KINDS}
    seen: set[str] = set()
    home: list[tuple[str, str, str, str]] = []
    others: list[tuple[str, str, str, str]] = []
    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        if not text or f"[{GROUP_PREFIX}" not in text:
            continue
        dist_name = dist.metadata["Name"] or "?"
        key = dist_name.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            continue
        seen.add(key)
        source = f"{dist_name} {dist.version}"
        for ep in dist.entry_points:
            if ep.group in groups:
                (home if key == HOME else others).append((groups[ep.group], ep.name, ep.value, source))
    return [*home, *others]


class Registry:
    """kind -> name -> `Entry`; entry points are read on first use (`scan`), targets imported on `resolve`."""

    def __init__(self, scan: Callable[[], Iterable[tuple[str, str, str, str]]] = scan_entry_points) -> None:
        self._scan = scan
        self._lock = threading.RLock()
        self._installed: dict[str, dict[str, Entry]] | None = None
        self._clashes: dict[tuple[str, str], list[Entry]] = {}
        self._code: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self._loaded: dict[tuple[str, str], object] = {}

    # -- filling ------------------------------------------------------------------------------------------------

    def _entry_points(self) -> dict[str, dict[str, Entry]]:
        with self._lock:
            if self._installed is None:
                installed: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
                for kind, name, value, source in self._scan():
                    entry = Entry(kind, name, value, source)
                    known = installed[kind].get(name)
                    if known is None:
                        installed[kind][name] = entry
                    elif known.source != source:  # two distributions claim one name: refused when resolved
                        self._clashes.setdefault((kind, name), [known]).append(entry)
                self._installed = installed
            return self._installed

    def register(self, kind: str, name: str, target: object) -> None:
        """Make `name` of `kind` resolve to `target` ("module:attr", imported when resolved, or the object
        itself), replacing whatever had that name (an entry point or an earlier `register`)."""
        _check_kind(kind)
        if not name:
            raise ValueError(f"{KINDS[kind]}: empty name")
        if isinstance(target, str) and not _is_reference(target):
            raise ValueError(f"{KINDS[kind]} {name!r}: target {target!r} is not \"module:attr\"")
        with self._lock:
            self._code[kind][name] = Entry(kind, name, target, CODE)
            self._loaded.pop((kind, name), None)

    def unregister(self, kind: str, name: str) -> None:
        """Forget what `register` made of `name` (an entry point of that name shows again)."""
        _check_kind(kind)
        with self._lock:
            self._code[kind].pop(name, None)
            self._loaded.pop((kind, name), None)

    # -- reading ------------------------------------------------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """The names of `kind`: entry points (the built-ins first, then other distributions'), then names
        registered from code, in registration order."""
        _check_kind(kind)
        installed = self._entry_points()[kind]
        with self._lock:
            return [*installed, *(name for name in self._code[kind] if name not in installed)]

    def entry(self, kind: str, name: str) -> Entry:
        """The entry of `name` without importing anything; UnknownPluginError naming the known names."""
        _check_kind(kind)
        installed = self._entry_points()[kind]
        with self._lock:
            found = self._code[kind].get(name)
        if found is not None:
            return found
        if name in installed:
            clash = self._clashes.get((kind, name))
            if clash:
                raise PluginLoadError(f"{KINDS[kind]} {name!r} is declared by more than one distribution: "
                                      + "; ".join(e.where for e in clash) + " (uninstall one, or `register` the one "
                                      "to use from code)")
            return installed[name]
        raise UnknownPluginError(unknown_message(kind, name, self.names(kind)))

    def resolve(self, kind: str, name: str) -> object:
        """The object `name` stands for, imported on first use and kept."""
        entry = self.entry(kind, name)
        key = (kind, name)
        with self._lock:
            if key in self._loaded:
                return self._loaded[key]
        obj = load_target(entry) if isinstance(entry.target, str) else entry.target
        with self._lock:
            self._loaded[key] = obj
        return obj

    def resolve_class(self, kind: str, name: str, base: type[Any]) -> type[Any]:
        """`resolve`, checked to be a subclass of `base` (PluginLoadError naming the plug-in otherwise). Typed
        `type[Any]`: `base` is usually abstract, which mypy does not take for a `type[T]`."""
        obj = self.resolve(kind, name)
        if not (isinstance(obj, type) and issubclass(obj, base)):
            raise PluginLoadError(f"{KINDS[kind]} {name!r} {self.entry(kind, name).where} is not a subclass of "
                                  f"{base.__module__}.{base.__qualname__}")
        return obj


def _is_reference(value: str) -> bool:
    module, sep, attr = value.partition(":")
    return bool(sep) and all(part.isidentifier() for part in [*module.split("."), *attr.split(".")])


def unknown_message(kind: str, name: str, known: list[str]) -> str:
    """`unknown task 'x'; expected one of: a, b` (plus a hint when not even the built-ins are installed)."""
    message = f"unknown {KINDS[kind]} {name!r}; expected one of: {', '.join(sorted(known)) or '(none)'}"
    if not known:
        message += (f" (no `{GROUP_PREFIX}{kind}` entry points are installed: the built-ins are declared in "
                    "dialectbias's pyproject.toml, so install the package, e.g. `pip install -e .`)")
    return message


def import_object(reference: str) -> Any:
    """The object "module:attr" names (attr may be dotted: "pkg.mod:Class.method"), imported; the one
    "module:attr" loader of the package (ValueError for a reference without ":")."""
    module_name, sep, attr = reference.partition(":")
    if not sep or not attr:
        raise ValueError(f"{reference!r} is not \"module:attr\"")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_target(entry: Entry) -> object:
    """`import_object` of an entry's "module:attr"; PluginLoadError naming the plug-in when it fails."""
    assert isinstance(entry.target, str)
    try:
        return import_object(entry.target)
    except Exception as exc:  # any failure of a plug-in's import is reported as that plug-in's
        raise PluginLoadError(f"{KINDS[entry.kind]} {entry.name!r} {entry.where} failed to load: "
                              f"{type(exc).__name__}: {exc}") from exc


#: the process's registry
REGISTRY = Registry()


def register(kind: str, name: str, target: object) -> None:
    """Make `name` of `kind` resolve to `target` ("module:attr" or the object); overrides an entry point."""
    REGISTRY.register(kind, name, target)


def unregister(kind: str, name: str) -> None:
    """Undo `register(kind, name, …)`."""
    REGISTRY.unregister(kind, name)


def names(kind: str) -> list[str]:
    """Every name of `kind` (see `Registry.names`)."""
    return REGISTRY.names(kind)


def entry(kind: str, name: str) -> Entry:
    """The entry of `name` of `kind`, nothing imported."""
    return REGISTRY.entry(kind, name)


def resolve(kind: str, name: str) -> object:
    """The object registered as `name` of `kind`, imported on first use."""
    return REGISTRY.resolve(kind, name)


def resolve_class(kind: str, name: str, base: type[Any]) -> type[Any]:
    """The class registered as `name` of `kind`, checked to subclass `base`."""
    return REGISTRY.resolve_class(kind, name, base)
