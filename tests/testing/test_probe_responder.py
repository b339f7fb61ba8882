"""The test server's association stand-in: parseable answers, a stereotype only when labels name the writers."""

from __future__ import annotations

import json
import random

from dialectbias.tasks.probes.association._core import build_association_prompt, load_traits, parse_association
from dialectbias.tasks.probes.association._score import association_bias
from dialectbias.testing import association_responder


def _answer(prompt_text: str, model: str = "m", json_schema: bool = False) -> str | None:
    body = {"model": model, "messages": [{"role": "user", "content": prompt_text}]}
    if json_schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
    return association_responder(body)


def _mean_bias(standard: str, dialect: str, n: int = 200) -> tuple[float, int]:
    traits = load_traits()
    scores, rejected = [], 0
    for i in range(n):
        trait = traits[sorted(traits)[i % len(traits)]]
        prompt = build_association_prompt(standard, dialect, trait, random.Random(i))
        parsed = parse_association(_answer(prompt.text) or "", prompt)
        if parsed.ok:
            scores.append(association_bias(parsed, prompt).bias)
        else:
            rejected += 1
    return sum(scores) / len(scores), rejected


def test_naming_labels_get_the_stereotype_and_texts_a_coin() -> None:
    naming, rejected = _mean_bias("Writes in standard German.", "Writes in the Bavarian German dialect.")
    assert 0.45 < naming < 0.75  # expected 0.6: 4 in 5 adjectives follow the stereotype
    assert 0 < rejected < 30  # 1 in 20 answers carries a preamble line
    usage, _ = _mean_bias("Ich gehe heute nach Hause.", "I geh heit hoam.")
    assert abs(usage) < 0.15


def test_other_requests_fall_back_and_json_is_an_object() -> None:
    assert _answer("What is the capital of Bavaria?") is None
    prompt = build_association_prompt("Writes in standard German.", "Writes in dialect.", load_traits()["rural"],
                                      random.Random(1))
    data = json.loads(_answer(prompt.text, json_schema=True) or "")
    assert set(data) == set(prompt.adjectives) and set(data.values()) <= {"A", "B"}
    assert _answer(prompt.text) == _answer(prompt.text)  # deterministic


def test_the_responder_reads_the_trait_adjectives_the_task_loads() -> None:
    """The test server reads the packaged traits YAML itself (it imports no task): the same poles as the task's."""
    from dialectbias.testing._trait_words import trait_poles

    expected = [(frozenset(a.lower() for a in t.trait.adjectives), frozenset(a.lower() for a in t.opposite.adjectives))
                for t in load_traits().values()]
    assert trait_poles() == expected and len(expected) == 6
