"""Remake the fixture logs under tests/interop/fixtures/ with the real packages (not a test).

    .venv-interop/bin/python tests/interop/make_fixture_logs.py

The experiment is `fixture_experiment` (tests/interop/interop_fixture.py): qa_bias on conftest's first three
items. Written: inspect.eval (inspect_ai's default zip log, model model-a), inspect.json (--log-format json),
inspect_error.eval (the test server answers 500 to item q02's prompts, inspect retries none and the eval goes
on: --no-fail-on-error), lm_eval_samples.jsonl (lm-eval --log_samples, model model-b). Versions used are in
fixtures/VERSIONS.txt.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from interop_fixture import fixture_experiment  # noqa: E402
from interop_harness import run_inspect, run_lm_eval  # noqa: E402

from dialectbias.api import open_experiment  # noqa: E402
from dialectbias.interop import write_inspect_dataset, write_lm_eval_task  # noqa: E402
from dialectbias.testing import TestServer  # noqa: E402

FIXTURES = HERE / "fixtures"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, TestServer(responder="dialectbias.testing:qa_responder") as server:
        root = Path(tmp)
        exp, task = open_experiment(fixture_experiment(root / "exp", server.base_url))
        dataset = root / "dataset.jsonl"
        write_inspect_dataset(exp, task, dataset)
        shutil.copy(run_inspect(dataset, server.base_url, "model-a", root / "logs"), FIXTURES / "inspect.eval")
        shutil.copy(run_inspect(dataset, server.base_url, "model-a", root / "logs", log_format="json"),
                    FIXTURES / "inspect.json")
        server.set_faults([{"kind": "500", "match": "খুলনা"}])  # item q02's place name
        shutil.copy(run_inspect(dataset, server.base_url, "model-a", root / "logs",
                                extra=("--no-fail-on-error", "--max-retries", "0")), FIXTURES / "inspect_error.eval")
        server.set_faults(None)
        written = write_lm_eval_task(exp, task, root / "lm")
        samples = run_lm_eval(root / "lm", written.names[0], server.base_url, "model-b", root / "lm_out")
        shutil.copy(samples, FIXTURES / "lm_eval_samples.jsonl")
    versions = [f"{p} {importlib.metadata.version(p)}" for p in ("inspect_ai", "lm_eval", "openai")]
    (FIXTURES / "VERSIONS.txt").write_text("written by make_fixture_logs.py with\n" + "\n".join(versions) + "\n",
                                           encoding="utf-8")


if __name__ == "__main__":
    main()
