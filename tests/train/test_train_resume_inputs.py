"""`train_translator(resume=True)` continues only on the examples its checkpoints were trained on (issue 19
item 5's sibling: what is built from a corpus follows the corpus): a corpus edited, or options that select
other examples, between the interrupted run and the resume are an error naming what changed."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from dialectbias.errors import ConfigError
from dialectbias.train import TranslatorTrainConfig, checkpoints, train_translator
from tiny_llm import write_corpus

FAST = {"gradient_accumulation_steps": 1, "micro_batch_size": 4, "learning_rate": 1e-2, "logging_steps": 1,
        "num_threads": 1, "max_steps": 5, "save_steps": 2}


def interrupted(tiny_base: Path, corpus: Path, out: Path) -> None:
    from transformers import TrainerCallback

    class Stop(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.global_step == 3:
                raise KeyboardInterrupt  # fault injection: Ctrl-C after checkpoint-2 was saved

    with pytest.raises(KeyboardInterrupt):
        train_translator(corpus, tiny_base, out, TranslatorTrainConfig(**FAST), callbacks=[Stop()])
    assert [p.name for p in checkpoints(out)] == ["checkpoint-2"]


def test_resume_after_the_corpus_changed_is_refused(tiny_base: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    interrupted(tiny_base, corpus, tmp_path / "out")
    with (tmp_path / "corpus" / "pairs_train.csv").open("a", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerow(["নতুন একটি বাক্য", "নোতুন এগু বাক্য", "sylhet"])
    with pytest.raises(ConfigError, match=r"out: --resume: its checkpoints were trained on other examples .*"
                                          r"pairs_train\.csv content changed.*or train into a new --out"):
        train_translator(corpus, tiny_base, tmp_path / "out", TranslatorTrainConfig(**FAST), resume=True)


def test_resume_with_options_that_select_other_examples_is_refused(tiny_base: Path, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    interrupted(tiny_base, corpus, tmp_path / "out")
    with pytest.raises(ConfigError, match=r"trained on other examples .*corpus unchanged: the options that select "
                                          r"examples differ"):
        train_translator(corpus, tiny_base, tmp_path / "out", TranslatorTrainConfig(**FAST, dialects=["sylhet"]),
                         resume=True)
    record = train_translator(corpus, tiny_base, tmp_path / "out", TranslatorTrainConfig(**FAST), resume=True)
    assert record["resumed_from"] == "checkpoint-2" and record["global_step"] == 5
