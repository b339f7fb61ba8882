"""The translate stand-in responder: it reads the package's translate prompts and leaves the rest to qa_responder."""

from __future__ import annotations

from dialectbias.tasks.translate._post import CleanContext, clean_list, clean_text, numbered, prompt_lines
from dialectbias.tasks.translate._prompt import render_prompt, resolve_target
from dialectbias.testing import qa_responder, translate_responder


def body(content: str, model: str = "m") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def test_a_dialect_prompt_gets_a_cleanable_dialect_answer_for_any_model() -> None:
    target = resolve_target("sylhet", extra={}, source_language="bn", scripts={})
    source = "ঢাকা জেলার প্রধান নদীর নাম কী?"
    prompt = render_prompt("translate/dialect_bn", None, target, source, numbered=False, n_lines=1, examples=[])
    ctx = CleanContext(script="bengali", labels=(target.source_label, target.target_label),
                       prompt_lines=prompt_lines(prompt, exclude=[source]))
    for model in ("a", "b", "c", "d", "e", "f", "g", "h"):  # every noise style the hash picks
        answer = translate_responder(body(prompt, model))
        assert answer is not None
        assert clean_text(answer, source, ctx).text == "ঢাকা জিলার বড় গাঙর নাম কিতা?", answer


def test_a_list_prompt_gets_aligned_numbered_lines_in_the_target_script() -> None:
    target = resolve_target("hindi", extra={}, source_language="bn", scripts={})
    options = ["ইলিশ মাছ", "রুই মাছ", "১৯৭১"]
    prompt = render_prompt("translate/language", None, target, numbered(options), numbered=True, n_lines=3,
                           examples=[])
    answer = translate_responder(body(prompt))
    cleaned = clean_list(answer or "", options, CleanContext(script="devanagari", labels=("Bengali:", "Hindi:")))
    assert cleaned.ok and len(cleaned.text or []) == 3


def test_other_requests_get_the_qa_responders_answer() -> None:
    question = body("নিচের প্রশ্নটির উত্তর দিন।\n\nপ্রশ্ন: বোরো ধান কাকে বলে?")
    assert translate_responder(question) == qa_responder(question)
