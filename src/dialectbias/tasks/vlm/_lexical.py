"""BLEU and character-level ROUGE-L of captions per model × variant × strategy × domain (and `all`
domains), as the released BanglaVerse scorer computes them per domain and prompting mode (BanglaVerse §4.3;
PROCEDURES.md §2 "Caption metrics"; the formulas are in `dialectbias.metrics._caption_lexical`).

A caption counts when its request succeeded and its reference is not empty; a caption empty after cleaning
is skipped (`options.lexical_empty: skip`, the released scorer's `if gold and pred`) or scored as an empty
caption (`zero`). The reference is NFC-normalised like the caption unless `options.lexical_nfc_reference`
is false (the released scorer's raw reference).
"""

from __future__ import annotations

import math
import unicodedata
from typing import TYPE_CHECKING, Any

import pandas as pd

from dialectbias.metrics import caption_bleu, rouge_l_chars
from dialectbias.tasks.vlm._stats import ALL, KEYS

if TYPE_CHECKING:
    from dialectbias.tasks.vlm._caption import CaptionOptions

LEXICAL_COLUMNS = ("bleu", "bleu_n", "rouge_l", "rouge_l_n")


def lexical_reference(reference: str, options: CaptionOptions) -> str:
    text = reference.strip()
    return unicodedata.normalize("NFC", text) if options.lexical_nfc_reference else text


def scored(row: dict[str, Any], options: CaptionOptions) -> bool:
    """True when the caption takes part in BLEU and ROUGE-L (see the module's docstring)."""
    return (row["status"] == "ok" and bool(row["reference"].strip())
            and (bool(row["caption"]) or options.lexical_empty == "zero"))


def add_rouge_l(rows: list[dict[str, Any]], options: CaptionOptions) -> None:
    """Each row's own ROUGE-L F (`rouge_l`; None when it does not take part)."""
    for r in rows:
        r["rouge_l"] = (rouge_l_chars(r["caption"], lexical_reference(r["reference"], options), options.rouge_l_units)
                        if scored(r, options) else None)


def lexical_table(rows: list[dict[str, Any]], options: CaptionOptions) -> pd.DataFrame:
    """`model, variant, strategy, domain, bleu, bleu_n, rouge_l, rouge_l_n` per group of answered captions
    (rows with `rouge_l` from `add_rouge_l`): BLEU over the group's scored captions (corpus, or the mean of
    sentence BLEUs) and the mean ROUGE-L; nan with n = 0 when none is scored."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        base: tuple[str, ...] = (r["model"], r["variant"], r["strategy"])
        for key in ((*base, r["domain"]), (*base, ALL)):
            groups.setdefault(key, []).append(r)
    out = []
    for key, members in groups.items():
        used = [r for r in members if scored(r, options)]
        bleu = caption_bleu([r["caption"] for r in used], [lexical_reference(r["reference"], options) for r in used],
                            level=options.bleu_level, tokenize=options.bleu_tokenize)
        rouge = [float(r["rouge_l"]) for r in used]
        out.append({**dict(zip(KEYS, key, strict=True)), "bleu": bleu, "bleu_n": len(used),
                    "rouge_l": sum(rouge) / len(rouge) if rouge else math.nan, "rouge_l_n": len(rouge)})
    return pd.DataFrame(out, columns=[*KEYS, *LEXICAL_COLUMNS])


def describe(options: CaptionOptions) -> str:
    """The settings in words, for the report's metadata."""
    bleu = "corpus BLEU" if options.bleu_level == "corpus" else "mean sentence BLEU"
    units = "code points" if options.rouge_l_units == "code_points" else "grapheme clusters"
    empty = "skipped" if options.lexical_empty == "skip" else "scored as empty"
    ref = "NFC" if options.lexical_nfc_reference else "as stored"
    return (f"{bleu} (sacrebleu, tokenize {options.bleu_tokenize}); ROUGE-L F over {units}; empty captions "
            f"{empty}; references {ref}")


LEXICAL_LEGEND = {
    "bleu": "BLEU (0–100, sacrebleu) of the scored captions against their references (see metadata: corpus "
            "BLEU or the mean of sentence BLEUs)",
    "bleu_n": "captions in BLEU and ROUGE-L (answered, with a reference; empty captions as options."
              "lexical_empty says)",
    "rouge_l": "mean character-level ROUGE-L F (0–1): LCS of caption and reference characters, F = 2PR/(P+R)",
    "rouge_l_n": "captions in the ROUGE-L mean",
}
