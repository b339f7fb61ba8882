"""The one plug-in registry: entry points read once and lazily, a target imported only when resolved,
`register` overriding an entry point, and errors that name the kind, the name, the known names and (for a
plug-in that does not load) its distribution and "module:attr"."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialectbias import plugins
from dialectbias.errors import ConfigError
from dialectbias.plugins import PluginLoadError, Registry, UnknownPluginError
from dialectbias.providers import ModelConfig, config_class, provider_names
from dialectbias.run import executor_names
from dialectbias.tasks import Task, get_task, task_names


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The name of a module on sys.path (not imported yet) holding one Task subclass and a non-task."""
    name = f"fake_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        from dialectbias.tasks import Task

        class Thing(Task):
            name = "thing"

        NOT_A_TASK = 3
        """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def scanned(*entries: tuple[str, str, str, str]) -> tuple[Registry, list[int]]:
    """A registry over these entry points, and a list counting how often it scanned them."""
    scans: list[int] = []

    def scan() -> list[tuple[str, str, str, str]]:
        scans.append(1)
        return list(entries)

    return Registry(scan), scans


def test_a_target_is_imported_only_when_resolved_and_the_scan_runs_once(fake_module: str) -> None:
    registry, scans = scanned(("tasks", "thing", f"{fake_module}:Thing", "fake-dist 1.0"))
    assert scans == []  # nothing read before the first question
    assert registry.names("tasks") == ["thing"] and registry.entry("tasks", "thing").source == "fake-dist 1.0"
    assert fake_module not in sys.modules  # listed, not imported
    cls = registry.resolve_class("tasks", "thing", Task)
    assert cls.__name__ == "Thing" and fake_module in sys.modules
    assert registry.resolve("tasks", "thing") is cls and registry.names("executors") == []
    assert scans == [1]


def test_register_overrides_an_entry_point_and_unregister_restores_it(fake_module: str) -> None:
    registry, _ = scanned(("tasks", "thing", f"{fake_module}:Thing", "fake-dist 1.0"))
    first = registry.resolve("tasks", "thing")

    class Other(Task):
        name = "other"

    registry.register("tasks", "thing", Other)
    registry.register("tasks", "extra", f"{fake_module}:Thing")
    assert registry.resolve("tasks", "thing") is Other
    assert registry.entry("tasks", "thing").source == "register() in code"
    assert registry.names("tasks") == ["thing", "extra"]
    registry.unregister("tasks", "thing")
    assert registry.resolve("tasks", "thing") is first


def test_an_unknown_name_names_the_kind_and_the_known_names() -> None:
    registry, _ = scanned(("executors", "local", "x:Y", "dialectbias 0"), ("executors", "ray", "x:Z", "dialectbias 0"))
    with pytest.raises(UnknownPluginError, match=r"^unknown executor 'rai'; expected one of: local, ray$"):
        registry.entry("executors", "rai")
    assert issubclass(UnknownPluginError, ConfigError)  # the CLI prints it as a config error, with its line
    with pytest.raises(UnknownPluginError, match=r"no `dialectbias.tasks` entry points are installed.*pip install"):
        registry.resolve("tasks", "qa_bias")
    with pytest.raises(ValueError, match=r"unknown plug-in kind 'task'; kinds: tasks, providers"):
        registry.names("task")


def test_a_broken_plug_in_names_its_distribution_and_target(fake_module: str) -> None:
    registry, _ = scanned(("tasks", "gone", "no_such_module_xyz:Task", "broken-dist 0.1"),
                          ("tasks", "typo", f"{fake_module}:Thnig", "broken-dist 0.1"),
                          ("tasks", "three", f"{fake_module}:NOT_A_TASK", "broken-dist 0.1"))
    with pytest.raises(PluginLoadError, match=r"^task 'gone' from distribution broken-dist 0.1 "
                       r"\(no_such_module_xyz:Task\) failed to load: ModuleNotFoundError: No module named "
                       r"'no_such_module_xyz'"):
        registry.resolve("tasks", "gone")
    with pytest.raises(PluginLoadError, match=rf"task 'typo' .*\({fake_module}:Thnig\) failed to load: AttributeError"):
        registry.resolve("tasks", "typo")
    with pytest.raises(PluginLoadError, match=r"task 'three' from distribution broken-dist 0.1 .* is not a subclass of "
                       r"dialectbias.tasks._base.Task"):
        registry.resolve_class("tasks", "three", Task)


def test_two_distributions_claiming_one_name_are_refused_when_it_is_used() -> None:
    registry, _ = scanned(("providers", "echo", "a.mod:Config", "dist-a 1.0"),
                          ("providers", "echo", "b.mod:Config", "dist-b 2.0"))
    assert registry.names("providers") == ["echo"]
    with pytest.raises(PluginLoadError, match=r"provider 'echo' is declared by more than one distribution: from "
                       r"distribution dist-a 1.0 \(a.mod:Config\); from distribution dist-b 2.0 \(b.mod:Config\)"):
        registry.entry("providers", "echo")
    registry.register("providers", "echo", "c.mod:Config")  # code decides
    assert registry.entry("providers", "echo").target == "c.mod:Config"


def test_register_refuses_a_target_that_is_not_module_attr() -> None:
    registry, _ = scanned()
    with pytest.raises(ValueError, match=r"task 'x': target 'pkg/mod.py' is not \"module:attr\""):
        registry.register("tasks", "x", "pkg/mod.py")


def test_the_built_ins_come_from_the_package_entry_points() -> None:
    """pyproject.toml declares them; an installed dialectbias (editable or not) provides them."""
    assert {"qa_bias", "association", "decision", "translate", "vqa", "caption",
            "translation_quality"} <= set(task_names())
    assert plugins.entry("tasks", "qa_bias").source.startswith("dialectbias ")
    assert {"openai", "hf", "vllm"} <= set(provider_names()) and {"local", "ray"} <= set(executor_names())
    assert {"rlaif", "caption", "translation_fidelity"} <= set(plugins.names("rubrics"))
    assert get_task("qa_bias").__name__ == "QABiasTask"
    for name in provider_names():
        assert issubclass(config_class(name), ModelConfig)


def test_a_provider_config_must_take_its_registered_name() -> None:
    class Mislabelled(ModelConfig):
        pass

    plugins.register("providers", "mislabelled", Mislabelled)
    try:
        with pytest.raises(PluginLoadError, match=r"provider 'mislabelled' from register\(\) in code .*must declare "
                           r"`provider: Literal\['mislabelled'\] = 'mislabelled'`"):
            config_class("mislabelled")
    finally:
        plugins.unregister("providers", "mislabelled")


def test_a_rubric_registered_from_code_loads_by_name(tmp_path: Path) -> None:
    from dialectbias.judges import load_rubric, packaged_rubrics

    source = Path(str(__import__("dialectbias").__file__)).parent / "resources" / "rubrics" / "rlaif.yaml"
    mine = tmp_path / "mine.yaml"
    mine.write_text(source.read_text(encoding="utf-8").replace("name: rlaif", "name: mine", 1), encoding="utf-8")
    plugins.register("rubrics", "mine", mine)
    try:
        assert "mine" in packaged_rubrics()
        assert load_rubric("mine").fields == load_rubric("rlaif").fields
    finally:
        plugins.unregister("rubrics", "mine")
    with pytest.raises(ConfigError, match=r"unknown rubric 'mine'"):
        load_rubric("mine")


def test_a_rubric_entry_names_a_yaml_file_inside_a_package() -> None:
    from dialectbias.judges import load_rubric

    assert plugins.entry("rubrics", "rlaif").target == "dialectbias.resources.rubrics:rlaif.yaml"
    plugins.register("rubrics", "ghost", "dialectbias.resources.rubrics:ghost.yaml")
    try:
        with pytest.raises(PluginLoadError, match=r"rubric 'ghost' from register\(\) in code "
                           r"\(dialectbias.resources.rubrics:ghost.yaml\): FileNotFoundError"):
            load_rubric("ghost")
    finally:
        plugins.unregister("rubrics", "ghost")


def test_import_object_reads_module_colon_dotted_attr() -> None:
    from dialectbias.plugins import import_object

    assert import_object("dialectbias.tasks:Task.check") is Task.check
    with pytest.raises(ValueError, match=r"'dialectbias.tasks' is not \"module:attr\""):
        import_object("dialectbias.tasks")
