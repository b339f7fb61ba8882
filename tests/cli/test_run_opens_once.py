"""`dialectbias run` opens the experiment once: the file is read and checked (the corpus hashed) and the store
re-scored once, for the plan it prints and confirms and for the run itself."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import dialectbias.api
from dialectbias.store import Store
from store_sql import connection


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of experiment files read (`read`) and stores re-scored (`rescore`) through the API."""
    counts: Counter[str] = Counter()
    read_file, load_task = dialectbias.api.load_experiment_file, dialectbias.api.load_task

    def counting_read(*args: Any, **kwargs: Any) -> Any:
        counts["read"] += 1
        return read_file(*args, **kwargs)

    def counting_task(*args: Any, **kwargs: Any) -> Any:
        task = load_task(*args, **kwargs)
        rescore = task.rescore

        def counting_rescore(*a: Any, **kw: Any) -> Any:
            counts["rescore"] += 1
            return rescore(*a, **kw)

        task.rescore = counting_rescore
        return task

    monkeypatch.setattr(dialectbias.api, "load_experiment_file", counting_read)
    monkeypatch.setattr(dialectbias.api, "load_task", counting_task)
    return counts


@pytest.mark.parametrize("options", [["--plan"], ["--no-plan"], []], ids=["plan", "no-plan", "default"])
def test_run_reads_the_file_and_rescores_the_store_once(qa_server: Any, qa_project: Any, cli: Any,
                                                        opened: Counter[str], options: list[str]) -> None:
    project = qa_project(qa_server.base_url, n_items=2, model={"price_in_per_mtok": 1.0})
    first = cli("run", project.yaml_path, "--no-progress", "--yes", *options)
    assert first.exit_code == 0, first.output
    assert opened == {"read": 1}  # no store yet: nothing to re-score
    assert ("plan" in first.stderr) == (options != ["--no-plan"])  # priced: the plan is printed by default
    opened.clear()
    again = cli("run", project.yaml_path, "--no-progress", "--yes", *options)
    assert again.exit_code == 0, again.output
    assert opened == {"read": 1, "rescore": 1}
    assert "calls 0" in again.stdout


def test_a_refused_plan_reads_the_file_once_and_sends_nothing(qa_server: Any, qa_project: Any, cli: Any,
                                                             opened: Counter[str]) -> None:
    project = qa_project(qa_server.base_url, n_items=2, model={"price_in_per_mtok": 1e6, "price_out_per_mtok": 1e6})
    refused = cli("run", project.yaml_path, "--no-progress")
    assert refused.exit_code == 1 and "pass --yes" in refused.stderr
    assert opened == {"read": 1}
    assert qa_server.stats()["chat_requests"] == 0


def test_a_resumed_run_sweeps_each_stages_pending_requests_once_and_applies_no_set_again(
        qa_server: Any, qa_project: Any, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: after compiling a stage, to prepare the executor and to start it, the run asks which requests
    are pending, with nothing written in between: one sweep of the results' index per stage answers all three.
    And a compiled set still current as it was applied is not written into the current set again (schema 13)."""
    project = qa_project(qa_server.base_url, n_items=2)
    assert cli("run", project.yaml_path, "--no-progress", "--yes").exit_code == 0
    sweeps: Counter[str] = Counter()
    open_store = Store.open.__func__  # type: ignore[attr-defined]

    def seen(sql: str) -> None:
        if sql.startswith("SELECT cr.model_id, count(*) FROM current_requests cr NOT INDEXED"):
            sweeps.update([sql.split("cr.stage='")[1].split("'")[0]])
        elif "INTO current_requests" in sql:
            sweeps.update(["applied"])

    def tracing_open(cls: type[Store], *args: Any, **kwargs: Any) -> Store:
        store = open_store(cls, *args, **kwargs)
        connection(store).set_trace_callback(seen)
        return store

    monkeypatch.setattr(Store, "open", classmethod(tracing_open))
    again = cli("run", project.yaml_path, "--no-progress", "--no-plan")
    assert again.exit_code == 0, again.output
    assert "calls 0" in again.stdout
    assert sweeps == {"generate": 1, "judge": 1}
