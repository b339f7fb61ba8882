"""Every `dialectbias` command, registered here in one place (in the order `--help` lists them)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from dialectbias.cli import (
    _build,
    _commands,
    _data,
    _dialect_id,
    _models,
    _plan,
    _quickstart,
    _review,
    _tasks,
    _train,
    _view,
)
from dialectbias.cli._app import app, handle_sigterm
from dialectbias.cli._help import HelpApp
from dialectbias.cli._index import index_app

build_app = HelpApp(help="Build benchmark inputs (question sets, noisy items, vocabularies).")
review_app = HelpApp(help="Human review: the CSV round trip, the review app, annotators "
                         "and judge calibration.")
models_app = HelpApp(help="Local model files (GGUF to a Hugging Face folder for vLLM).")

app.command()(_commands.run)
app.command()(_plan.plan)
app.command()(_commands.status)
app.command()(_commands.export)
app.command()(_commands.report)
app.command()(_view.view)
app.command("import-generations")(_data.import_generations)
app.add_typer(build_app, name="build")
build_app.command("questions")(_data.questions)
build_app.command("noise")(_build.noise)
build_app.command("vocabulary")(_build.vocabulary)
build_app.command("pairs")(_build.pairs)
build_app.command("qa-instruction-items")(_build.qa_instruction_items)
build_app.command("qa-instructions")(_build.qa_instructions)
app.command()(_quickstart.quickstart)
app.add_typer(review_app, name="review")
review_app.command("export")(_review.export_queue)
review_app.command("import")(_review.import_queue)
review_app.command("sample")(_review.sample)
review_app.command("calibration")(_review.calibration)
review_app.command("add-annotator")(_review.add_annotator)
review_app.command("serve")(_review.serve)
app.command()(_tasks.tasks)
app.add_typer(index_app, name="index")
app.add_typer(models_app, name="models")
app.command("train-dialect-id")(_dialect_id.train_dialect_id)
app.command("dialect-id")(_dialect_id.dialect_id)
models_app.command("convert-gguf")(_models.convert_gguf)
app.command("train-translator")(_train.train_translator)


def command_name(command: typer.models.CommandInfo) -> str:
    """The name a command is called by (typer's: the function's, `_` as `-`, unless it was given one)."""
    if command.name:
        return command.name
    assert command.callback is not None, "every command here is registered with its function"
    return command.callback.__name__.lower().replace("_", "-")


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs `dialectbias ARGS`: when the first argument names a command or a command group, an app
    holding only that one, so that typer builds the parameters of one command instead of all of them (~40 ms,
    a tenth of a cached `run`); the whole app otherwise (`--help`, no command, an unknown command: its error
    lists the others). Help, usage lines and errors of the command read the same either way."""
    name = args[0] if args else None
    commands = [c for c in app.registered_commands if command_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = HelpApp(name=app.info.name, help=app.info.help)
    one.registered_commands, one.registered_groups = commands, groups
    one.callback()(_group)  # a group, as the whole app is: a lone command would become the program itself
    return one


def _group() -> None:
    """Nothing to do before the command runs (`app_for`)."""


def main() -> None:
    handle_sigterm()
    app_for(sys.argv[1:])(prog_name="dialectbias")


if __name__ == "__main__":
    main()
