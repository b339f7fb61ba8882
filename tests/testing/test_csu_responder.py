"""The VLM test responder answers csu (commonsense short-answer) prompts: words of the question, the abstention
phrase the prompt names, labels and markdown now and then, a `Final Answer:` line in CoT; images are checked."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from dialectbias.tasks.vlm._csu_score import extract_answer, is_abstention
from dialectbias.testing import vlm_responder
from dialectbias.testing._vlm_responder import IMAGE_CHECK_FAILED

QUESTION = "ভুনা খিচুড়ি সাধারণত কোন খাবারের সাথে পরিবেশন করা হয়?"
CSU = ("You are an expert assistant for Bangla culture and commonsense reasoning tasks.\n"
       "5) If you are not sure about the answer, respond exactly with: অনুমান করা যাচ্ছে না\n\n"
       f"Question: {QUESTION}\nAnswer:")


def png(shade: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (6, 6), (shade, 0, 0)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def body(text: str, images: list[str], model: str = "m") -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": u}} for u in images]
    return {"model": model, "messages": [{"role": "user", "content": [*parts, {"type": "text", "text": text}]}]}


def test_answers_are_question_words_or_the_prompts_abstention() -> None:
    answers = [extract_answer(vlm_responder(body(CSU, [png(s)], model=f"m{s}")) or "") for s in range(60)]
    abstained = [a for a in answers if is_abstention(a)]
    assert 3 <= len(abstained) <= 30
    words = set(QUESTION.rstrip("?").split())
    said = [a for a in answers if not is_abstention(a) and a != "I think it is a festival"]
    assert said and all(set(a.split()) <= words for a in said)


def test_cot_ends_with_a_final_answer_and_images_are_counted() -> None:
    cot = CSU.replace("respond exactly with:", "x") + "\nthe final answer is exactly: অনুমান করা যাচ্ছে না\n" \
        "Reasoning_En:\nFinal Answer: <short_answer>"
    answer = vlm_responder(body(cot, [png(9)])) or ""
    assert answer.startswith("Reasoning_En:") and "\nFinal Answer: " in answer
    assert (vlm_responder(body(CSU, [png(1), png(2)])) or "").startswith(IMAGE_CHECK_FAILED)
