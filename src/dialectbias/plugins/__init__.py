"""Plug-ins: one lazy registry of tasks, providers, executors, review queue kinds and rubrics.

Another package adds one by declaring an entry point in its `pyproject.toml` (group `dialectbias.tasks`,
`dialectbias.providers`, `dialectbias.executors`, `dialectbias.review_kinds` or `dialectbias.rubrics`; value
"module:attr", or "package:file.yaml" for a rubric), exactly as dialectbias declares its own built-ins; code
adds one with `register`. See docs/extending.md."""

from dialectbias.plugins._registry import (
    GROUP_PREFIX,
    KINDS,
    Entry,
    PluginLoadError,
    Registry,
    UnknownPluginError,
    entry,
    import_object,
    names,
    register,
    resolve,
    resolve_class,
    unregister,
)

__all__ = ["GROUP_PREFIX", "KINDS", "Entry", "PluginLoadError", "Registry", "UnknownPluginError", "entry",
           "import_object", "names", "register", "resolve", "resolve_class", "unregister"]
