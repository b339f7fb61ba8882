"""Find and read rubric files: a packaged rubric by name (`rlaif`), or a user's YAML file."""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from pydantic import ValidationError

from dialectbias import plugins
from dialectbias._yaml import load_yaml
from dialectbias.errors import ConfigError, read_text_file, validation_problems
from dialectbias.judges._rubric import Rubric

_SUFFIXES = (".yaml", ".yml")


def packaged_rubrics() -> list[str]:
    """Names of the rubrics known by name: the `rubrics` plug-ins (entry-point group `dialectbias.rubrics`; the
    package's own are `src/dialectbias/resources/rubrics/*.yaml`), and any `register("rubrics", …)`."""
    return sorted(plugins.names("rubrics"))


def load_rubric(name_or_path: str | Path, base_dir: str | Path | None = None) -> Rubric:
    """A rubric by name (`rlaif`, `caption`, `translation_fidelity`, or a plug-in's), or a rubric YAML file;
    a relative path is resolved under `base_dir` (the experiment's folder; default the working directory).
    A file path is anything ending in .yaml/.yml or containing a path separator.
    Raises ConfigError naming the file and the line of the key at fault."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith(_SUFFIXES) or "/" in text or "\\" in text:
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = Path(base_dir or Path.cwd()) / path
        return _load_file(path.resolve())
    if text not in plugins.names("rubrics"):
        raise ConfigError(f"unknown rubric {text!r}: packaged rubrics are {', '.join(packaged_rubrics())}; "
                          "a rubric file is a path ending in .yaml")
    return _load_named(text, plugins.entry("rubrics", text).target)


@cache
def _load_named(name: str, target: object) -> Rubric:
    """A named rubric's YAML: "package:file.yaml" (a file inside an importable or namespace package), or, from
    `register`, a path or a `Traversable`. Cached per (name, target): `ReviewQueue.rubric_of` asks per judgment."""
    if isinstance(target, str):
        try:
            return rubric_resource(target)
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            raise plugins.PluginLoadError(f"rubric {name!r} {plugins.entry('rubrics', name).where}: "
                                          f"{type(exc).__name__}: {exc}") from None
    if isinstance(target, Path | Traversable):
        return parse_rubric(target.read_text(encoding="utf-8"), str(target))
    raise plugins.PluginLoadError(f"rubric {name!r}: registered as {target!r}, not \"package:file.yaml\" or a path")


@cache
def rubric_resource(reference: str) -> Rubric:
    """The rubric file `reference` names, "package:file.yaml" (what a `dialectbias.rubrics` entry point holds),
    read without a plug-in lookup: `judges._rlaif` reads the paper's rubric so when the package is imported."""
    package, _, file = reference.partition(":")
    source = resources.files(package) / file
    return parse_rubric(source.read_text(encoding="utf-8"), f"{package.replace('.', '/')}/{file} (package data)")


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
