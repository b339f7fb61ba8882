"""Issue 19.4: one store, one experiment. A second experiment file pointed at a store that another file runs
in is refused, by every command, naming both files and how to proceed; the first experiment's report keeps
all its rows; `--take-over` and a `store:` of its own are the ways on, and neither re-sends what is stored."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.store import Store
from store_sql import connection

TABLES = ("qa_bias_counts.csv", "qa_bias_model_by_dialect.csv")


def experiment(qa: Any, directory: Path, base_url: str, name: str, *, store: str | None = "shared.sqlite",
               models: tuple[str, ...] = ("model-a", "model-b")) -> Path:
    """An experiment file `<name>.yaml` in `directory` over 2 items (`store:` shared unless None)."""
    project = qa.make_project(directory, base_url, n_items=2, name=name)
    config = copy.deepcopy(project.config)
    config["models"] = [m for m in config["models"] if m["id"] in models]
    if store is not None:
        config["store"] = store
    project.yaml_path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return project.yaml_path


def calls(server: Any) -> int:
    return int(server.stats()["chat_requests"])


def run(cli: Any, path: Path, *args: str, expect: int = 0) -> Any:
    result = cli("run", path, "--no-progress", *args)
    assert result.exit_code == expect, result.output
    return result


def report_tables(cli: Any, path: Path, out: Path) -> dict[str, str]:
    result = cli("report", path, "--out", out)
    assert result.exit_code == 0, result.output
    return {name: (out / name).read_text(encoding="utf-8") for name in TABLES}


def current_generations(store_path: Path) -> int:
    with Store.open(store_path, create=False) as store:
        return store.query("SELECT count(*) FROM current_requests WHERE stage = 'generate'")[0][0]


@pytest.fixture
def study_a(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """study-a.yaml run in shared.sqlite (12 generations, 8 judgments) and its report tables."""
    path = experiment(qa, tmp_path, qa_server.base_url, "study-a")
    run(cli, path)
    assert calls(qa_server) == 20
    qa_server.reset_stats()
    return path, report_tables(cli, path, tmp_path / "report-a")


def test_a_second_experiment_on_the_store_is_refused_and_the_first_keeps_its_rows(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",))
    result = run(cli, b, expect=1)
    assert calls(qa_server) == 0
    error = result.stderr
    assert error.startswith(f"error: {tmp_path / 'shared.sqlite'}: this store holds experiment 'study-a' ({a}), "
                            f"not 'study-b' ({b})")
    assert "give study-b.yaml a `store:` of its own" in error
    assert "dialectbias run study-b.yaml --take-over" in error
    assert "Traceback" not in result.output
    assert current_generations(tmp_path / "shared.sqlite") == 12
    assert report_tables(cli, a, tmp_path / "report-a2") == tables


@pytest.mark.parametrize("command", [("status",), ("report", "--out", "rep-b"), ("export", "--out", "exp-b"),
                                     ("review", "export", "--out", "queue-b.csv"), ("plan",),
                                     ("import-generations", "gens.jsonl")])
def test_every_command_with_the_other_experiment_file_is_refused(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]],
        command: tuple[str, ...]) -> None:
    a, _ = study_a
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",))
    qa.write_jsonl(tmp_path / "gens.jsonl", [{"item_id": "q01", "variant": "standard", "model": "model-a",
                                              "output": "নদী"}])
    args = [str(tmp_path / arg) if arg.endswith(("-b", ".csv", ".jsonl")) else arg for arg in command[1:]]
    if command[0] == "review":
        args = ["export", str(b), *[str(tmp_path / "queue-b.csv") if x.endswith(".csv") else x for x in args[1:]]]
        result = cli("review", *args)
    else:
        result = cli(command[0], b, *args)
    assert result.exit_code == 1, result.output
    assert f"this store holds experiment 'study-a' ({a}), not 'study-b' ({b})" in result.stderr
    assert not (tmp_path / "rep-b").exists() and not (tmp_path / "exp-b").exists()
    assert not (tmp_path / "queue-b.csv").exists()
    assert calls(qa_server) == 0 and current_generations(tmp_path / "shared.sqlite") == 12


def test_a_copy_of_the_file_keeping_its_name_is_refused_on_the_default_store(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    a = experiment(qa, tmp_path, qa_server.base_url, "study", store=None)
    run(cli, a)
    copied = tmp_path / "study-copy.yaml"
    shutil.copy(a, copied)  # same name: the same default store, study.sqlite
    result = run(cli, copied, expect=1)
    assert f"this store holds experiment 'study' ({a}), not 'study' ({copied})" in result.stderr


def test_take_over_runs_the_other_experiment_and_the_first_takes_it_back_without_calls(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",))
    run(cli, b, "--take-over")
    assert calls(qa_server) == 0  # study-b asks for a subset of what study-a stored: all of it is stored
    assert current_generations(tmp_path / "shared.sqlite") == 6
    refused = cli("report", a, "--out", tmp_path / "report-x")
    assert refused.exit_code == 1 and f"not 'study-a' ({a})" in refused.stderr
    run(cli, a, "--take-over")
    assert calls(qa_server) == 0
    assert report_tables(cli, a, tmp_path / "report-a2") == tables


def test_a_store_of_its_own_runs_the_second_experiment(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",), store="study-b.sqlite")
    run(cli, b)
    assert calls(qa_server) == 10  # 6 generations, 4 judgments: the cache is the store's own
    assert report_tables(cli, a, tmp_path / "report-a2") == tables


def test_a_renamed_experiment_in_the_same_file_keeps_its_store(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    a.write_text(a.read_text(encoding="utf-8").replace("name: study-a", "name: study-a2"), encoding="utf-8")
    run(cli, a)
    assert calls(qa_server) == 0
    assert report_tables(cli, a, tmp_path / "report-a2") == tables
    with Store.open(tmp_path / "shared.sqlite", create=False) as store:
        assert store.get_meta("owner_experiment") == "study-a2"


def test_a_moved_experiment_file_keeps_its_store(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    moved = a.rename(tmp_path / "final-study.yaml")  # the old file is gone: a rename, not a second experiment
    assert report_tables(cli, moved, tmp_path / "report-moved") == tables
    run(cli, moved)
    assert calls(qa_server) == 0
    with Store.open(tmp_path / "shared.sqlite", create=False) as store:
        assert store.get_meta("owner_file") == "final-study.yaml"


def test_a_moved_project_folder_keeps_its_store(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",))  # still there
    moved = shutil.move(tmp_path, tmp_path.parent / f"{tmp_path.name}-moved")
    try:
        here = Path(moved)
        assert report_tables(cli, here / a.name, here / "report-a2") == tables
        assert cli("status", here / b.name).exit_code == 1
    finally:
        shutil.move(moved, tmp_path)


def test_a_store_written_before_owners_were_recorded_belongs_to_its_experiment_by_name(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path, study_a: tuple[Path, dict[str, str]]) -> None:
    a, tables = study_a
    with Store.open(tmp_path / "shared.sqlite", create=False) as store:
        connection(store).execute("DELETE FROM meta WHERE key LIKE 'owner_%'")
    b = experiment(qa, tmp_path, qa_server.base_url, "study-b", models=("model-a",))
    refused = cli("status", b)
    assert refused.exit_code == 1
    assert "this store holds experiment 'study-a' (file not recorded), not 'study-b'" in refused.stderr
    assert report_tables(cli, a, tmp_path / "report-a2") == tables
    run(cli, a)
    assert calls(qa_server) == 0
    with Store.open(tmp_path / "shared.sqlite", create=False) as store:
        assert (store.get_meta("owner_experiment"), store.get_meta("owner_file")) == ("study-a", "study-a.yaml")


def test_a_new_name_without_a_store_says_where_the_earlier_results_are(
        qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> None:
    path = experiment(qa, tmp_path, qa_server.base_url, "study", store=None)
    run(cli, path)
    qa_server.reset_stats()
    path.write_text(path.read_text(encoding="utf-8").replace("name: study", "name: study-v2"), encoding="utf-8")
    result = run(cli, path)
    assert calls(qa_server) == 20  # a new default store, study-v2.sqlite: everything is asked again …
    assert (f"warning: study-v2.sqlite is a new store: study.yaml's results under `name: study` are in "
            f"{tmp_path / 'study.sqlite'}; `store: study.sqlite` uses them") in result.stderr  # … and it says so
    path.write_text(path.read_text(encoding="utf-8") + "store: study.sqlite\n", encoding="utf-8")
    qa_server.reset_stats()
    run(cli, path)
    assert calls(qa_server) == 0
