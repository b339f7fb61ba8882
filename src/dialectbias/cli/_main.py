"""Every `dialectbias` command, registered here in one place (in the order `--help` lists them)."""

from __future__ import annotations

import sys

import typer

from dialectbias.cli import _commands, _data, _models, _plan, _quickstart, _review, _tasks
from dialectbias.cli._app import app

build_app = typer.Typer(no_args_is_help=True, help="Build benchmark inputs (question sets).")
review_app = typer.Typer(no_args_is_help=True, help="Human review of low-confidence judgments (CSV round trip).")
models_app = typer.Typer(no_args_is_help=True, help="Local model files (GGUF to a Hugging Face folder for vLLM).")

app.command()(_commands.run)
app.command()(_plan.plan)
app.command()(_commands.status)
app.command()(_commands.export)
app.command()(_commands.report)
app.command("import-generations")(_data.import_generations)
app.add_typer(build_app, name="build")
build_app.command("questions")(_data.questions)
app.command()(_quickstart.quickstart)
app.add_typer(review_app, name="review")
review_app.command("export")(_review.export_queue)
review_app.command("import")(_review.import_queue)
review_app.command("calibration")(_review.calibration)
app.command()(_tasks.tasks)
app.add_typer(models_app, name="models")
models_app.command("convert-gguf")(_models.convert_gguf)


def main() -> None:
    app(prog_name="dialectbias")


if __name__ == "__main__":
    sys.exit(main())
