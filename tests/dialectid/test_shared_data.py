"""Dialect identification on the real data (needs ../shared/data): Vashantor's train split (five dialects and
their shared standard side) and the RegSpeech12 test transcripts (12 districts), held-out macro-F1 above a floor.

Measured (seed 0, 20% grouped held-out, scikit-learn 1.9.1, 2026-12-01): macro-F1 0.786 with the defaults
(n-grams 2–5, all units, weights balanced by label × source; 25–45 s on 2 busy cores) and 0.868 on Vashantor's
Test split (never seen); 0.69 with n-grams 1–4 and at most 300 units per label (the fast test). The floors leave
room for scikit-learn version differences."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from shared_data import VASHANTOR, shared_path

pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    why = "the real-data dialect-identification test needs it"
    vashantor = shared_path(*VASHANTOR, why=why)
    regspeech = shared_path("regspeech12_test_transcripts", why=why)
    corpus = tmp_path_factory.mktemp("dialectid") / "vashantor-train.yaml"
    corpus.write_text(yaml.safe_dump({"name": "vashantor-train", "files": [{
        "path": str(vashantor / "Train" / "*.csv"), "standard": "standard_text",
        "dialect_text": "dialect_text", "dialect": "dialect"}]}), encoding="utf-8")
    return corpus, regspeech / "regspeech12_test_transcripts.csv"


def check(summary: object, floor: float, vashantor_floor: float) -> None:
    from dialectbias.dialectid import TrainSummary

    assert isinstance(summary, TrainSummary)
    assert summary.labels == ["barishal", "chittagong", "comilla", "habiganj", "kishoreganj", "mymensingh", "narail",
                              "narsingdi", "noakhali", "rangpur", "sandwip", "standard", "sylhet", "tangail"]
    assert not summary.not_held_out  # every label has held-out units
    assert summary.macro_f1 > floor, [(s.label, round(s.f1, 3)) for s in summary.scores]
    # the five Vashantor dialects (thousands of sentences each, parallel) are told apart best
    f1 = {s.label: s.f1 for s in summary.scores}
    assert min(f1[d] for d in ("barishal", "chittagong", "mymensingh", "noakhali", "sylhet")) > vashantor_floor


def test_vashantor_and_regspeech12_capped(sources: tuple[Path, Path], tmp_path: Path) -> None:
    from dialectbias.dialectid import train_dialect_id

    corpus, transcripts = sources
    summary = train_dialect_id([corpus], [transcripts], tmp_path / "m", seed=0, ngram_range=(1, 4), max_per_label=300)
    check(summary, floor=0.62, vashantor_floor=0.45)
    skipped = summary.skipped()
    assert skipped["shared_standard"] > 7000 and skipped["too_short"] > 1000  # counted, not silently dropped
    assert summary.capped["sylhet"] > 5000 and "comilla" not in summary.capped


@pytest.mark.slow
def test_vashantor_and_regspeech12_defaults(sources: tuple[Path, Path], tmp_path: Path) -> None:
    from dialectbias.dialectid import train_dialect_id

    corpus, transcripts = sources
    test_split = corpus.with_name("vashantor-test.yaml")
    test_split.write_text(corpus.read_text(encoding="utf-8").replace("/Train/", "/Test/"), encoding="utf-8")
    summary = train_dialect_id([corpus], [transcripts], tmp_path / "m", seed=0, eval_corpora=[test_split])
    check(summary, floor=0.74, vashantor_floor=0.8)
    assert summary.external is not None and summary.external.units > 2000 and summary.external.macro_f1 > 0.8
