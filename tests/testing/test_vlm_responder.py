"""The VLM test responder checks the images it receives and answers in the requested formats (issue 12.6)."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from PIL import Image

from dialectbias.tasks.vlm._parse import parse_vqa
from dialectbias.testing import vlm_responder
from dialectbias.testing._vlm_responder import CAPTION_WORDS, IMAGE_CHECK_FAILED
from dialectbias.text import script_violation

OPTIONS = ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"]


def png(shade: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (6, 6), (shade, 0, 0)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def body(text: str, images: list[str], model: str = "m") -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "image_url", "image_url": {"url": u}} for u in images]
    return {"model": model, "messages": [{"role": "user", "content": [*parts, {"type": "text", "text": text}]}]}


VQA = f"answers visual multiple-choice questions in Bangla.\nReview the provided answer choices: " \
      f"{json.dumps(OPTIONS, ensure_ascii=False)}\nIndex: <option_index>"


def test_answers_depend_on_the_image_and_parse() -> None:
    answers = {vlm_responder(body(VQA, [png(s)], model=f"m{s}")) for s in range(40)}
    assert len(answers) > 4  # formats and options vary with the image and the model
    parsed = [parse_vqa(a or "", OPTIONS) for a in answers]
    assert sum(p.parsed for p in parsed) >= len(parsed) - 3


def test_cot_prompts_get_english_reasoning_and_a_final_answer() -> None:
    answer = vlm_responder(body(VQA + "\nReasoning_En:", [png(3)])) or ""
    assert answer.startswith("Reasoning_En:") and "Final Answer" in answer


def test_image_count_and_decoding_are_checked() -> None:
    few_shot = VQA + "\nExample 1:\nImage:\nExample 2:\nImage:"
    assert (vlm_responder(body(few_shot, [png(1), png(2), png(3)])) or "").startswith(IMAGE_CHECK_FAILED) is False
    missing = vlm_responder(body(few_shot, [png(1), png(2)])) or ""
    assert missing == f"{IMAGE_CHECK_FAILED}: 2 image(s) for a prompt expecting 3"
    assert (vlm_responder(body(VQA, [])) or "").startswith(IMAGE_CHECK_FAILED)
    broken = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).decode()
    assert "does not decode" in (vlm_responder(body(VQA, [broken])) or "")


def test_captions_follow_the_requested_language_mostly() -> None:
    prompt = "You are an assistant who generates short, fluent captions in {} only."
    for language, variant in (("Hindi", "hindi"), ("Urdu", "urdu"), ("Bangla", "standard")):
        captions = [vlm_responder(body(prompt.format(language), [png(s)])) or "" for s in range(24)]
        violations = [script_violation(c, variant) for c in captions]
        assert violations.count(False) >= 16 and any(w in " ".join(captions) for w in CAPTION_WORDS[language])


def test_caption_rubric_requests_get_valid_judgments() -> None:
    schema = {"type": "object", "properties": {k: {"type": "number"} for k in
                                               ("relevance", "clarity", "conciseness", "creativity", "overall")}}
    request = {"model": "judge", "messages": [{"role": "user", "content": "Reference Caption: \"a\""}],
               "response_format": {"type": "json_schema", "json_schema": {"name": "caption", "schema": schema}}}
    judgment = json.loads(vlm_responder(request) or "{}")
    assert set(judgment) >= {"relevance", "overall", "explanation"}
    assert all(0 <= judgment[k] <= 1 for k in ("relevance", "clarity", "conciseness", "creativity", "overall"))
