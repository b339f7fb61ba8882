"""`kill -9` during `dialectbias train-translator`, then `--resume`: training continues from the last complete
checkpoint and the step count goes on (a checkpoint cut short while saving is never resumed from)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from dialectbias.train import TRAINING_JSON, checkpoints


def test_kill_9_then_resume_continues_the_step_count(tiny_base: Path, corpus: Path, tmp_path: Path,
                                                      qa: Any) -> None:
    out = tmp_path / "out"
    args = ["train-translator", corpus, "--base-model", tiny_base, "--out", out, "--grad-accum", "1",
            "--learning-rate", "0.01", "--logging-steps", "1", "--save-steps", "2", "--num-threads", "1"]
    proc = subprocess.Popen([*qa.dialectbias_command(), *map(str, args), "--max-steps", "5000"],
                            env=qa.subprocess_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(checkpoints(out)) < 2:  # two complete checkpoints: training is under way
            assert proc.poll() is None, f"training ended early: {proc.stderr.read().decode() if proc.stderr else ''}"
            assert time.monotonic() < deadline, "no checkpoint within 60 s"
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        if proc.stderr:
            proc.stderr.close()
    assert not (out / TRAINING_JSON).exists()
    last = checkpoints(out)[-1]
    step = int(last.name.split("-")[1])
    assert step >= 4
    done = qa.run_subprocess(*args, "--max-steps", step + 3, "--resume", timeout=120)
    assert done.exit_code == 0, done.output
    record = json.loads((out / TRAINING_JSON).read_text(encoding="utf-8"))
    assert record["resumed_from"] == last.name and record["global_step"] == step + 3
    assert [e["step"] for e in record["loss"]["train"]] == list(range(1, step + 4))
    assert (out / "adapter_model.safetensors").is_file()
