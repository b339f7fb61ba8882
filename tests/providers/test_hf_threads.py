"""The hf provider's torch threads (graceful under CPU load) and its silence while loading a model."""

from __future__ import annotations

from typing import Any

import pytest

from dialectbias.providers._hf_config import HFModelConfig, choose_threads


@pytest.mark.parametrize(("available", "physical", "busy", "total", "threads"), [
    (2, 2, 0.0, 2, 2),    # two idle cores: both
    (2, 2, 0.4, 2, 2),    # a little background noise: 2 × 0.8 = 1.6 free → 2
    (2, 2, 1.0, 2, 1),    # one competing CPU-bound process: 1 free core → 1 thread
    (2, 2, 3.0, 2, 1),    # overloaded: never below 1
    (8, 8, 2.0, 8, 6),    # 8 cores, 2 busy → 6
    (4, 2, 0.0, 4, 2),    # hyper-threads: at most the physical cores
    (2, 2, 8.0, 16, 1),   # 2 of a 16-CPU host, half the host busy: half of ours → 1
])
def test_threads_follow_the_free_cores(available: int, physical: int, busy: float, total: int,
                                       threads: int) -> None:
    choice = choose_threads(available=available, physical=physical, busy=busy, total=total)
    assert choice.threads == threads
    assert f"~{busy:.1f} of {total} CPU(s) busy" in choice.reason


def test_num_threads_in_the_config_wins() -> None:
    choice = choose_threads(3, available=2, physical=2, busy=2.0, total=2)
    assert (choice.threads, choice.reason) == (3, "num_threads in the model config")


def test_the_default_setting_is_chosen_at_load_time() -> None:
    config = HFModelConfig(id="m", model="/nowhere")
    assert config.num_threads is None
    assert "load" in (HFModelConfig.model_fields["num_threads"].description or "")
    assert 1 <= choose_threads().threads <= 1024


def test_gguf_conversion_bar_is_silenced(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    gguf_utils = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    from dialectbias.providers._hf_worker import silence_third_party_progress

    silence_third_party_progress()
    silence_third_party_progress()  # idempotent: wraps the bar once
    assert list(gguf_utils.tqdm(range(50), desc="Converting and de-quantizing GGUF tensors...")) == list(range(50))
    captured = capsys.readouterr()
    assert "Converting" not in captured.err + captured.out


def _worker_between_batches(monkeypatch: pytest.MonkeyPatch, busy: float, threads: int) -> tuple[Any, list[int]]:
    """A worker (its thread not started) that chose `threads` at load; `busy` is what the CPU shows now."""
    torch = pytest.importorskip("torch")
    from dialectbias.providers import _hf_worker
    from dialectbias.providers._hf_config import ThreadChoice

    calls: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    monkeypatch.setattr(_hf_worker, "busy_cores", lambda **_: busy)
    monkeypatch.setattr(_hf_worker, "choose_threads",
                        lambda **kw: choose_threads(available=2, physical=2, total=2, **kw))
    worker = _hf_worker._Worker.__new__(_hf_worker._Worker)
    worker.config = HFModelConfig(id="m", model="/nowhere")
    worker.threads = ThreadChoice(threads, "at load")
    worker._threads_checked = 100.0
    return worker, calls


def test_threads_follow_the_cpu_between_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # chosen under a load that has ended (e.g. the install before the quickstart): back to 2 threads
    worker, calls = _worker_between_batches(monkeypatch, busy=0.0, threads=1)
    worker._recheck_threads(now=110.0)  # too soon: unchanged
    assert calls == [] and worker.threads.threads == 1
    worker._recheck_threads(now=131.0)
    assert calls == [2] and worker.threads.threads == 2
    # another program starts using a core: down to 1
    worker, calls = _worker_between_batches(monkeypatch, busy=1.0, threads=2)
    worker._recheck_threads(now=131.0)
    assert calls == [1] and worker.threads.threads == 1


def test_num_threads_in_the_config_is_never_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    worker, calls = _worker_between_batches(monkeypatch, busy=1.0, threads=2)
    worker.config = HFModelConfig(id="m", model="/nowhere", num_threads=2)
    worker._recheck_threads(now=1000.0)
    assert calls == [] and worker.threads.threads == 2


def test_a_recheck_ignores_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's own past batches are in the load average; between batches its threads are idle."""
    import os

    from dialectbias.providers._hf_config import busy_cores

    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    assert busy_cores(samples=2, pause=0.0) == 64.0
    assert busy_cores(samples=2, pause=0.0, load_average=False) < 64.0
