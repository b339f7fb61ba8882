"""The LoRA recipe's departures (docs/departures.md): our loss covers the target only (the prompt masked);
BanglaVerse App. C.1 applies the causal LM objective across the whole sequence, and App. C.2 checkpoints
gradients. `replicate: paper` in the recipe sets both; a recipe key that contradicts it is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.cli._train import load_recipe
from dialectbias.data import load_corpus
from dialectbias.errors import ConfigError
from dialectbias.train import IGNORE, encode_examples, pair_examples
from tiny_llm import write_corpus


def test_the_paper_learns_the_whole_sequence(tiny_base: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny_base))
    examples = pair_examples(load_corpus(write_corpus(tmp_path))).examples[:2]
    ours = encode_examples(tok, examples, max_length=512)
    paper = encode_examples(tok, examples, max_length=512, loss_on="sequence")
    for e, mine, theirs in zip(examples, ours.rows, paper.rows, strict=True):
        n_prompt = len(tok(e.prompt, add_special_tokens=True)["input_ids"])
        assert mine["input_ids"] == theirs["input_ids"]
        assert theirs["labels"] == theirs["input_ids"] and IGNORE not in theirs["labels"]
        assert mine["labels"][:n_prompt] == [IGNORE] * n_prompt
        assert mine["labels"][n_prompt:] == theirs["labels"][n_prompt:]


def test_replicate_paper_in_the_recipe(tmp_path: Path) -> None:
    assert (load_recipe(None, {}).loss_on, load_recipe(None, {}).gradient_checkpointing) == ("target", False)
    paper = load_recipe(None, {"replicate": "paper"})
    assert (paper.loss_on, paper.gradient_checkpointing) == ("sequence", True)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("replicate: paper\nloss_on: target\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"loss_on: 'target' contradicts `replicate: paper` \(the paper's value "
                                          r"is 'sequence'"):
        load_recipe(recipe, {})
    assert load_recipe(recipe, {"loss_on": "sequence"}).loss_on == "sequence"  # the command line wins
