"""A tiny randomly initialised Llama built in the tests (imported by name: tests/ is on sys.path): 2 layers,
hidden 64, a byte-level BPE trained in-process on English and Bengali words, with or without a chat template.
Shared by the `hf` provider's tests and the LoRA trainer's (tests/train, tests/e2e/test_translate_lora.py), with
a small standard → dialect corpus to train it on."""

from __future__ import annotations

import csv
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
WORDS = (
    "the a of and to in is it you that he was for on are with as his they be at one have this from "
    "or had by word but what some we can out other were all there when up use your how said an each "
    "she which do their time if will way about many then them write would like so these her long "
    "make thing see him two has look more day could go come did number sound no most people my over "
    "know water than call first who may down side been now find any new work part take get place "
    "made live where after back little only round man year came show every good me give our under "
    "name very through just form sentence great think say help low line differ turn cause much mean "
    "before move right boy old too same tell does set three want air well also play small end put "
    "home read hand port large spell add even land here must big high such follow act why ask men "
    "change went light kind off need house picture try us again animal point mother world near build "
    "self earth father head stand own page should country found answer school grow study still learn "
    "plant cover food sun four between state keep eye never last let thought city tree cross farm "
    "hard start might story saw far sea draw left late run while press close night real life few north "
    "আমি তুমি সে আমরা তোমরা তারা বাংলা ভাষা ঢাকা সিলেট চট্টগ্রাম ভাত মাছ পানি জল বাড়ি স্কুল বই পড়া "
    "লেখা খাওয়া যাওয়া আসা ভালো খারাপ বড় ছোট নতুন পুরান মানুষ দেশ গ্রাম শহর নদী আকাশ সূর্য চাঁদ "
    "score label note yes no low mid high true false null "
    '{ } [ ] : , " 0 1 2 3 4 5 6 7 8 9 -1 10 42 3.5 {"score": 3, "label": "low", "note": "ok"} '
    '{"a": [1, 2]} \\n \\" \\u0041'
)


def build_tiny_llama(directory: Path, with_template: bool = True) -> Path:
    """A random 2-layer Llama (hidden 64) with a byte-level BPE trained on WORDS."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator([WORDS] * 3, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        chat_template=CHAT_TEMPLATE if with_template else None,
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=bpe.get_vocab_size(),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


#: standard sentence, its Sylhet and its Chittagong version (Vashantor-style, written for the tests)
SENTENCES = [
    ("তুমি কী খেয়েছো?", "তুমি কিতা খাইছো?", "তুঁই কী খাইয়ো?"),
    ("আমি বাজারে যাচ্ছি।", "আমি বাজারো যাইরাম।", "আঁই বাজারত যাইর।"),
    ("তোমার বাড়ি কোথায়?", "তুমার বাড়ি কুনানো?", "তোঁয়ার বাড়ি হডে?"),
    ("আজকে অনেক বৃষ্টি হচ্ছে।", "আইজ বাক্কা ঝড় অইরার।", "আজিয়া বউত বৈষ্টা অর।"),
    ("সে কাল স্কুলে যাবে না।", "তাই কাইল স্কুলো যাইতো নায়।", "হিতে হাইল ইস্কুলত ন যাইবো।"),
    ("তোমার নাম কী?", "তুমার নাম কিতা?", "তোঁয়ার নাম কী?"),
    ("আমরা ভাত খাব।", "আমরা ভাত খাইমু।", "আঁরা ভাত খাইয়ুম।"),
    ("জ্বর হলে কী করা উচিত?", "জ্বর অইলে কিতা করা লাগে?", "জ্বর অইলে কী গরা উচিত?"),
    ("ঢাকা জেলার প্রধান নদীর নাম কী?", "ঢাকা জিলার বড় গাঙর নাম কিতা?", "ঢাকা জিলার বড় গাঙর নাম কী?"),
    ("বোরো ধান কাকে বলে?", "বোরো ধান কারে কয়?", "বোরো ধান কারে হয়?"),
]


def write_corpus(directory: Path, rows: list[tuple[str, str, str]] | None = None, *, identical: int = 0) -> Path:
    """A corpus file over one CSV (split train, from its name): each sentence in Sylhet and Chittagong, plus
    `identical` rows whose dialect text equals the standard text."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "pairs_train.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        for std, syl, ctg in rows or SENTENCES:
            writer.writerow([std, syl, "sylhet"])
            writer.writerow([std, ctg, "chittagong"])
        for i in range(identical):
            writer.writerow([f"একই বাক্য {i}", f"একই বাক্য {i}", "sylhet"])
    corpus = directory / "corpus.yaml"
    corpus.write_text("name: tiny\nfiles:\n  - {path: pairs_train.csv, standard: standard_text, "
                      "dialect_text: dialect_text, dialect: dialect}\n", encoding="utf-8")
    return corpus
