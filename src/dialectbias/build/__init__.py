"""Building benchmark inputs: question sets from templates, noisy-text items, vocabularies (SPEC §4 P1)."""

from dialectbias.build._noise import (
    NoiseResult,
    hf_token_counter,
    item_seed,
    noise_items,
    parity_rows,
    parity_tokenizers,
)
from dialectbias.build._pair_items import PairItemsResult, item_id, pair_items
from dialectbias.build._qa_instructions import InstructionsResult, instruction_items, write_instructions
from dialectbias.build._questions import (
    PAPER_DOMAINS,
    QUESTION_TYPES,
    TEMPLATES,
    DomainTopics,
    Question,
    build_questions,
    genitive,
    load_topics,
)
from dialectbias.build._vocabulary import build_vocabulary, corpus_texts, write_vocabulary

__all__ = [
    "PAPER_DOMAINS",
    "QUESTION_TYPES",
    "TEMPLATES",
    "DomainTopics",
    "InstructionsResult",
    "NoiseResult",
    "PairItemsResult",
    "Question",
    "build_questions",
    "build_vocabulary",
    "corpus_texts",
    "genitive",
    "hf_token_counter",
    "instruction_items",
    "item_id",
    "item_seed",
    "load_topics",
    "noise_items",
    "pair_items",
    "parity_rows",
    "parity_tokenizers",
    "write_instructions",
    "write_vocabulary",
]
