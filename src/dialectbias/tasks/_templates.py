"""Prompt templates: Jinja2 files with stable names; a user directory can override any of them."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from dialectbias.errors import ConfigError


@lru_cache(maxsize=32)
def _environment(user_dir: str | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if user_dir:
        loaders.append(jinja2.FileSystemLoader(user_dir))
    loaders.append(jinja2.FileSystemLoader(str(resources.files("dialectbias") / "templates")))
    return jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=False, autoescape=False)


def _template(name: str, user_dir: str | None) -> jinja2.Template | None:
    """Jinja's own cache keeps compiled templates and reloads a file that changed on disk."""
    try:
        return _environment(user_dir).get_template(f"{name}.j2")
    except jinja2.TemplateNotFound:
        return None
    except jinja2.TemplateError as exc:
        raise ConfigError(f"prompt template {name!r}: {exc}") from None


def template_exists(name: str, user_dir: Path | None = None) -> bool:
    return _template(name, str(user_dir) if user_dir else None) is not None


def render(name: str, user_dir: Path | None = None, **context: Any) -> str:
    """Render template `name` (e.g. "qa_bias/answer"); pure: same inputs, same text."""
    template = _template(name, str(user_dir) if user_dir else None)
    if template is None:
        raise ConfigError(f"prompt template {name!r} not found (looked in {user_dir or 'the package'})")
    try:
        return template.render(**context).strip()
    except jinja2.TemplateError as exc:
        raise ConfigError(f"prompt template {name!r}: {exc}") from None


@lru_cache(maxsize=32)
def _file_environment(folder: str) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=False, autoescape=False)


def render_file(path: Path, **context: Any) -> str:
    """Render a user's Jinja2 file (e.g. a judge's `template:`); errors name the file."""
    try:
        template = _file_environment(str(path.parent)).get_template(path.name)
        return template.render(**context).strip()
    except jinja2.TemplateNotFound:
        raise ConfigError(f"{path}: template file not found") from None
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        raise ConfigError(f"{path}{f':{line}' if line else ''}: {exc}") from None
