"""The quickstart's banner says what this run will do (issue 19.12): on a rerun in the same folder, that
every prompt is answered already (no model load, no duration estimate), not the first run's 2–13 minutes.
The model is the test server's stand-in association model, so this runs without SmolLM2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dialectbias import quickstart as quickstart_module
from dialectbias.testing import TestServer


def test_a_rerun_banner_says_everything_is_answered_already(cli: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with TestServer(responder="dialectbias.testing:association_responder") as server:
        def stand_in(samples: int = quickstart_module.SAMPLES) -> dict[str, Any]:
            return {"name": "quickstart", "task": "association", "seed": 0, "note": quickstart_module.NOTE,
                    "models": [{"id": "smollm2-135m", "provider": "openai", "base_url": server.base_url,
                                "model": "stand-in"}],
                    "options": {"setting": "naming", "languages": quickstart_module.LANGUAGES, "samples": samples,
                                "answer_format": "json", "n_resamples": 100}}

        monkeypatch.setattr(quickstart_module, "quickstart_experiment", stand_in)
        first = cli("quickstart", "--out", tmp_path / "qs", "--samples", "1")
        assert first.exit_code == 0, first.output
        assert "Expected duration: about" in first.stdout and "Already done" not in first.stdout
        calls = server.stats()["requests_total"]
        assert calls >= 24
        again = cli("quickstart", "--out", tmp_path / "qs", "--samples", "1")
        assert again.exit_code == 0, again.output
        assert server.stats()["requests_total"] == calls  # nothing sent
    banner = " ".join(again.stdout.split("Experiment file:")[0].split())
    assert "Already done: all 24 prompts were answered by an earlier quickstart" in banner, banner
    assert "no model is loaded, nothing is sent" in banner
    assert "Expected duration" not in banner and "loading the model takes" not in banner
