"""The test server's qa_responder: deterministic Bengali answers and valid RLAIF judgments."""

from __future__ import annotations

import json

from dialectbias.judges import RlaifJudgment, parse_structured, reask_messages, rlaif_json_schema
from dialectbias.testing import qa_responder
from dialectbias.text import check_script, detect_refusal

QUESTION = {"role": "user", "content": "নিচের প্রশ্নটির উত্তর প্রমিত বাংলায় দিন।\n\nপ্রশ্ন: ঢাকা জেলার প্রধান নদীর নাম কী?"}
JUDGE = [{"role": "system", "content": "You are an expert evaluator."},
         {"role": "user", "content": "STANDARD QUESTION:\nঢাকা জেলার প্রধান নদীর নাম কী?"}]


def judge_body(messages: list[dict], model: str = "judge-model", mode: str = "json_schema") -> dict:
    schema = rlaif_json_schema()
    fmt = ({"type": "json_schema", "json_schema": {"name": "rlaif", "schema": schema, "strict": True}}
           if mode == "json_schema" else {"type": "json_object", "schema": schema})
    return {"model": model, "messages": messages, "response_format": fmt}


def test_generation_answer_is_bengali_and_deterministic() -> None:
    body = {"model": "model-a", "messages": [QUESTION]}
    answer = qa_responder(body)
    assert answer is not None and answer.startswith("উত্তর: ")
    assert answer == qa_responder(json.loads(json.dumps(body)))
    assert check_script(answer, "bengali").ok and detect_refusal(answer) is None
    words = set(answer.removeprefix("উত্তর: ").rstrip("।").split())
    assert words <= {"ঢাকা", "জেলার", "প্রধান", "নদীর", "নাম", "কী"}


def test_answers_depend_on_model_and_question() -> None:
    answers = {qa_responder({"model": m, "messages": [{"role": "user", "content": f"প্রশ্ন: {q}"}]})
               for m in ("model-a", "model-b")
               for q in ("ঢাকা জেলার প্রধান নদীর নাম কী?", "খুলনা জিলার বড় গাঙর নাম কী?", "সিলেট জিলার নাম কিতা?")}
    assert len(answers) >= 5


def test_question_without_bengali_still_gets_a_bengali_answer() -> None:
    answer = qa_responder({"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2?"}]})
    assert answer is not None and check_script(answer, "bengali").ok


def test_judge_answer_is_a_valid_rlaif_judgment() -> None:
    text = qa_responder(judge_body(JUDGE))
    assert text is not None
    assert next(iter(json.loads(text))) == "chain_of_thought_reasoning"
    assert list(json.loads(text))[-1] == "confidence"
    parsed = parse_structured(text, RlaifJudgment)
    assert parsed.status == "ok"
    assert parsed.value.script_valid is True and parsed.value.refusal is False


def test_judge_answer_is_deterministic_and_the_same_for_json_object() -> None:
    text = qa_responder(judge_body(JUDGE))
    assert qa_responder(judge_body(json.loads(json.dumps(JUDGE)))) == text
    assert qa_responder(judge_body(JUDGE, mode="json_object")) == text


def test_a_reask_gets_the_original_verdict() -> None:
    again = reask_messages(JUDGE, "{broken", "invalid JSON")
    assert qa_responder(judge_body(again)) == qa_responder(judge_body(JUDGE))


def test_judge_scores_spread_over_the_scale() -> None:
    values = set()
    for i in range(60):
        messages = [JUDGE[0], {"role": "user", "content": f"STANDARD QUESTION:\nপ্রশ্ন {i}"}]
        judgment = json.loads(qa_responder(judge_body(messages)) or "{}")
        values |= {judgment["dialect_comprehension"], judgment["confidence"] + 10}
    assert {0, 1, 2, 3, 4, 5} | {11, 12, 13, 14, 15} == values


def test_other_json_requests_fall_back_to_echo() -> None:
    body = {"model": "m", "messages": [QUESTION], "response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object", "properties": {"answer": {"type": "string"}}}}}}
    assert qa_responder(body) is None
    assert qa_responder({"model": "m", "messages": [QUESTION],
                         "response_format": {"type": "json_object"}}) is None
    assert qa_responder({"model": "m", "messages": []}) is None
