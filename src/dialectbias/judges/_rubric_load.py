"""Find and read rubric files: a packaged rubric by name (`rlaif`), or a user's YAML file."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from dialectbias._yaml import load_yaml
from dialectbias.errors import ConfigError, read_text_file, validation_problems
from dialectbias.judges._rubric import Rubric

_SUFFIXES = (".yaml", ".yml")


def packaged_rubrics() -> list[str]:
    """Names of the rubrics shipped with the package (`src/dialectbias/resources/rubrics/*.yaml`)."""
    return list(_packaged_names())


@cache
def _packaged_names() -> tuple[str, ...]:
    """The package folder is listed once (`ReviewQueue.rubric_of` asks per judgment)."""
    folder = resources.files("dialectbias") / "resources" / "rubrics"
    return tuple(sorted(p.name.rsplit(".", 1)[0] for p in folder.iterdir() if p.name.endswith(_SUFFIXES)))


def load_rubric(name_or_path: str | Path, base_dir: str | Path | None = None) -> Rubric:
    """A packaged rubric by name (`rlaif`, `caption`, `translation_fidelity`), or a rubric YAML file;
    a relative path is resolved under `base_dir` (the experiment's folder; default the working directory).
    A file path is anything ending in .yaml/.yml or containing a path separator.
    Raises ConfigError naming the file and the line of the key at fault."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith(_SUFFIXES) or "/" in text or "\\" in text:
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = Path(base_dir or Path.cwd()) / path
        return _load_file(path.resolve())
    if text not in _packaged_names():
        raise ConfigError(f"unknown rubric {text!r}: packaged rubrics are {', '.join(packaged_rubrics())}; "
                          "a rubric file is a path ending in .yaml")
    return _load_packaged(text)


@cache
def _load_packaged(name: str) -> Rubric:
    source = resources.files("dialectbias") / "resources" / "rubrics" / f"{name}.yaml"
    return parse_rubric(source.read_text(encoding="utf-8"), f"dialectbias/resources/rubrics/{name}.yaml (package data)")


def _load_file(path: Path) -> Rubric:
    return parse_rubric(read_text_file(path, ConfigError, "rubric file"), str(path))


def parse_rubric(text: str, source: str) -> Rubric:
    """Validate rubric YAML text; `source` (a file name) heads every error."""
    data, node = load_yaml(text, source, ConfigError)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of keys (name, description, fields, score, …)")
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join([f"{source}: invalid rubric", *validation_problems(exc, node=node)])) from None
