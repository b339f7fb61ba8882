"""Settings for the local Hugging Face transformers provider (`provider: hf`)."""

from __future__ import annotations

import functools
import hashlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from dialectbias.errors import ConfigError
from dialectbias.providers._base import ModelAPI
from dialectbias.providers._config import ModelConfig, ProviderCapabilities


class HFModelConfig(ModelConfig):
    """`model` is a local directory (or a directory holding `gguf_file`)."""

    #: Execution settings, not the model: batching, threads and device change only floating-point
    #: round-off (and the cache freezes one such sample anyway), so retuning them keeps cached outputs.
    #: `gguf_file`, `dtype` (the weights actually used) and `constrained_decoding` are in the identity.
    #: `adapter_merge` folds the LoRA weights into the base model: round-off only, like the device.
    NOT_IN_IDENTITY: ClassVar[frozenset[str]] = ModelConfig.NOT_IN_IDENTITY | {
        "batch_size", "batch_wait_s", "num_threads", "device", "adapter_merge"}

    #: in-process from a local folder, `batch_size` requests at once; prompt logprobs by a forward pass
    CAPABILITIES: ClassVar[ProviderCapabilities] = ProviderCapabilities(local=True, batched=True,
                                                                        prompt_logprobs=True)

    provider: Literal["hf"] = "hf"
    gguf_file: str | None = Field(default=None, description="GGUF file name inside `model`")
    batch_size: int = Field(default=8, ge=1, le=512)
    device: str = "cpu"
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "float32"
    constrained_decoding: Literal["llguidance", "none"] = "llguidance"
    num_threads: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="torch intra-op threads for the worker; default: chosen when the model loads — "
        "min(physical cores, available cores), fewer (down to 1) when other programs keep cores busy, "
        "because torch's default thread count is much slower than 1 thread when the CPU is shared",
    )
    batch_wait_s: float = Field(
        default=0.01, ge=0, le=5, description="how long an idle worker waits to fill a batch"
    )
    max_concurrency: int = Field(default=64, ge=1, le=4096)
    adapter: str | None = Field(
        default=None, description="a peft LoRA adapter folder (adapter_config.json + weights, e.g. what "
        "`dialectbias train-translator` writes) loaded on top of `model` (like `model`: an absolute path, or "
        "relative to the current directory); its content hash is part of the model identity, so a retrained "
        "adapter never reuses cached outputs. Needs peft: pip install 'dialectbias[train]'")
    adapter_merge: bool = Field(default=False, description="merge the adapter into the base weights after "
                                "loading (faster generation, same outputs up to round-off)")
    prompt_format: Literal["chat", "raw"] | None = Field(
        default=None, description="chat (default): the tokenizer's chat template, or `role: content` lines "
        "without one; raw: the messages' text sent verbatim as a completion prompt (no template, no role "
        "labels; the tokenizer's own BOS) — for base models and adapters trained on plain text such as "
        "`dialectbias train-translator`'s")

    def client(self) -> ModelAPI:
        return create(self)

    def identity(self) -> dict[str, Any]:
        """The config's identity plus, with an adapter, the sha256 of its adapter_config.json and weights."""
        out = super().identity()
        if self.adapter is not None:
            out["adapter_sha256"] = adapter_digest(Path(self.adapter).expanduser())
        return out


#: adapter files that decide its outputs (peft `save_pretrained`): the config and the weights
_ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors", "adapter_model.bin")
_DIGESTS: dict[tuple[Any, ...], str] = {}


def adapter_digest(folder: Path) -> str:
    """sha256 over the adapter's config and weight files (name and bytes, in a fixed order); "missing" when
    the folder has none. Cached by (path, size, mtime) of each file: `identity()` runs for every request."""
    files = [folder / name for name in _ADAPTER_FILES if (folder / name).is_file()]
    if not files:
        return "missing"
    key = (str(folder.resolve()), *((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files))
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\0")
            with f.open("rb") as fh:
                for block in iter(functools.partial(fh.read, 1 << 20), b""):
                    digest.update(block)
        _DIGESTS[key] = digest.hexdigest()
    return _DIGESTS[key]


def check_adapter(config: HFModelConfig) -> None:
    """A model with `adapter:` needs peft and a folder holding adapter_config.json: ConfigError otherwise."""
    if config.adapter is None:
        return
    folder = Path(config.adapter).expanduser()
    if not (folder / "adapter_config.json").is_file():
        why = "folder not found" if not folder.is_dir() else "no adapter_config.json in it (a peft LoRA folder)"
        raise ConfigError(f"model {config.id!r}: adapter {folder}: {why}")
    try:
        import peft  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"model {config.id!r}: `adapter:` needs peft, which the `train` extra installs: "
                          f"pip install 'dialectbias[train]' ({exc})") from None


@dataclass(frozen=True)
class ThreadChoice:
    """How many torch threads a local model uses, and why (printed by the quickstart, logged by `hf`)."""

    threads: int
    reason: str


def _physical_cores() -> int | None:
    """Distinct (physical id, core id) pairs of /proc/cpuinfo; None where that file does not exist."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    cores, physical = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            physical = value.strip()
        elif key == "core id":
            cores.add((physical, value.strip()))
    return len(cores) or None


def _available_cores() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text(encoding="utf-8").split()[:2]
        if quota != "max":
            available = min(available, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, available)


def busy_cores(samples: int = 5, pause: float = 0.05, *, load_average: bool = True) -> float:
    """How many CPUs other programs keep busy: the larger of the 1-minute load average and the
    runnable tasks seen now (/proc/stat procs_running, minus this process's reading thread).

    `load_average=False` counts only what runs now: for a re-check while the model is loaded, whose own
    past batches are in the load average (its threads are idle between batches, so not in the sample)."""
    load = 0.0
    if load_average:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            load = 0.0
    running: list[int] = []
    for i in range(samples):
        try:
            for line in Path("/proc/stat").read_text(encoding="utf-8").splitlines():
                if line.startswith("procs_running "):
                    running.append(int(line.split()[1]) - 1)
        except (OSError, ValueError):
            break
        if i + 1 < samples:
            time.sleep(pause)
    now = sum(running) / len(running) if running else 0.0
    return max(load, now, 0.0)


#: seconds between re-checks of the free cores while a model runs (when `num_threads` is not set)
THREAD_RECHECK_S = 30.0


def choose_threads(requested: int | None = None, *, available: int | None = None, physical: int | None = None,
                   busy: float | None = None, total: int | None = None) -> ThreadChoice:
    """torch threads for a local model: `requested` (the `num_threads` setting) when given; else
    min(physical cores, available cores), lowered to the cores other programs leave free (at least 1).

    torch's default (one thread per core) degrades badly when another process uses a core: its threads
    wait for each other at every operation. One thread per free core degrades gracefully. `busy` counts
    host-wide busy CPUs (out of `total`); when this process may use only some of the host's CPUs, the
    same share of its `available` ones is taken as busy.
    """
    if requested is not None:
        return ThreadChoice(requested, "num_threads in the model config")
    available = available if available is not None else _available_cores()
    physical = physical if physical is not None else (_physical_cores() or available)
    total = total if total is not None else max(os.cpu_count() or available, available)
    busy = busy if busy is not None else busy_cores()
    cap = max(1, min(physical, available))
    free = available * max(0.0, 1.0 - busy / total)
    threads = max(1, min(cap, math.floor(free + 0.5)))
    why = (f"{available} available core(s), {physical} physical; other programs keep ~{busy:.1f} "
           f"of {total} CPU(s) busy")
    return ThreadChoice(threads, why)


def create(config: HFModelConfig) -> ModelAPI:
    """The torch-based client (`HFModelConfig.client`), imported only when an `hf` model is used."""
    check_adapter(config)
    try:
        from dialectbias.providers._hf import HFModel
    except ImportError as exc:
        raise ConfigError(
            f"model {config.id!r} uses provider 'hf', which needs the optional extra: "
            f"pip install 'torch==2.13.0' 'dialectbias[hf]' ({exc})"
        ) from exc
    return HFModel(config)
