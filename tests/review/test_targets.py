"""Language tags and text direction of what the app shows; keys of the scales; the experiment option."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dialectbias.errors import ConfigError
from dialectbias.review import language_tag, text_direction
from dialectbias.review._targets import scale_keys


@pytest.mark.parametrize(("variant", "lang", "direction"), [
    ("sylhet", "bn", "ltr"), ("chittagong", "bn", "ltr"), ("standard", "bn", "ltr"), ("urdu", "ur", "rtl"),
    ("hindi", "hi", "ltr"), ("english", "en", "ltr"), ("bavarian", "de", "ltr"), ("chakma", "bn", "ltr"),
])
def test_language_and_direction_of_a_variant(variant: str, lang: str, direction: str) -> None:
    got = language_tag(variant, {"bn": ["chakma"]}, default="bn")
    assert got == lang and text_direction(got) == direction


def test_every_score_of_a_scale_has_a_key() -> None:
    assert scale_keys(list(range(11))) == {**{str(v): str(v) for v in range(10)}, "10": "t"}
    assert scale_keys([0, 1, 2]) == {"0": "0", "1": "1", "2": "2"}


def _experiment(tmp_path: Path, review: dict[str, object]) -> Path:
    (tmp_path / "items.jsonl").write_text('{"id": "q1", "variants": {"standard": "ক", "sylhet": "খ"}}\n',
                                          encoding="utf-8")
    model = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1"}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"name": "e", "task": "qa_bias", "data": "items.jsonl",
                                    "models": [{"id": "m", "model": "m", **model}],
                                    "judges": [{"id": "j1", "model": "j", "role": "primary", **model},
                                               {"id": "j2", "model": "j", "role": "secondary", **model}],
                                    "review": review}), encoding="utf-8")
    return path


@pytest.mark.parametrize("route", ["warn", "review", "j2"])
def test_on_miscalibrated_takes_warn_review_or_a_judge(tmp_path: Path, route: str) -> None:
    from dialectbias.api import load_experiment

    assert load_experiment(_experiment(tmp_path, {"on_miscalibrated": route})).review.on_miscalibrated == route


def test_on_miscalibrated_names_the_judges_when_wrong(tmp_path: Path) -> None:
    from dialectbias.api import load_experiment

    with pytest.raises(ConfigError, match="on_miscalibrated: 'j3' is neither warn, review nor a judge id"):
        load_experiment(_experiment(tmp_path, {"on_miscalibrated": "j3"}))
