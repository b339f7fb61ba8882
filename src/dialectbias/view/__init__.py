"""The results explorer (`dialectbias view`, issue 22 item 1): a read-only web app over one or more
experiments' stores. Every table of the task's report, sortable and filterable; a cell leads to the answers
behind it and an answer to its evidence (prompts, outputs, each judge's parsed fields, checks, flags, human
overrides, provenance); two experiments or two models compared cell by cell, with the answers whose verdict
changed; a JSON evidence API. See docs/explorer.md.

Modules: `_experiments` (open an experiment read-only), `_tables` (the report's tables, through the report's
own code), `_compare` (table differences, flipped verdicts), `_evidence` (what is behind one answer),
`_text` (capped texts, language and direction), `_app` (the FastAPI app, its state and access token),
`_pages` (HTML routes), `_api` (JSON routes)."""

from dialectbias.view._app import create_app
from dialectbias.view._experiments import LoadedExperiment, load_experiment_read_only

__all__ = ["LoadedExperiment", "create_app", "load_experiment_read_only"]
