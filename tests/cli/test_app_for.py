"""`dialectbias CMD …` runs an app holding only CMD (`app_for`: typer then builds one command's parameters, not
all of them); what the command prints — its help, usage errors, output — is the same as the whole app's."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dialectbias.cli._app import app
from dialectbias.cli._main import app_for, command_name

NAMES = [command_name(c) for c in app.registered_commands] + [str(g.name) for g in app.registered_groups]


def invoke(args: list[str]) -> tuple[int, str, str, str]:
    """(exit code, stdout, stderr) of the whole app and of `app_for(args)`'s stdout, for the same arguments."""
    whole = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    one = CliRunner().invoke(app_for(args), args, env={"COLUMNS": "100"})
    assert (one.exit_code, one.stderr) == (whole.exit_code, whole.stderr)
    return whole.exit_code, whole.stdout, whole.stderr, one.stdout


def test_every_command_and_group_is_found() -> None:
    assert {"run", "plan", "status", "report", "import-generations", "train-translator", "review", "index",
            "build", "models"} <= set(NAMES)
    for name in NAMES:
        assert app_for([name, "--help"]) is not app


@pytest.mark.parametrize("name", NAMES)
def test_a_command_help_and_usage_error_read_the_same(name: str) -> None:
    code, stdout, _, alone = invoke([name, "--help"])
    assert code == 0 and stdout.startswith(f"Usage: dialectbias {name} ")
    assert alone == stdout
    code, stdout, stderr, alone = invoke([name, "--no-such-option"])  # a usage error, nothing run
    assert code == 2 and "No such option: --no-such-option" in stderr
    assert alone == stdout


def test_a_command_runs_in_its_own_app() -> None:
    code, stdout, _, alone = invoke(["tasks", "qa_bias"])
    assert code == 0 and "qa_bias" in stdout
    assert alone == stdout
    code, _, stderr, _ = invoke(["run"])
    assert code == 2 and "Missing argument 'experiment'" in stderr


@pytest.mark.parametrize("args", [[], ["--help"], ["rnu"], ["--no-such-option"]], ids=repr)
def test_no_command_or_an_unknown_one_gets_the_whole_app(args: list[str]) -> None:
    assert app_for(args) is app
