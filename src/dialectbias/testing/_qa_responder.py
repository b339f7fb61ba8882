"""Deterministic responders for the test server.

Use ``TestServer(responder="dialectbias.testing:qa_responder")``.

Same messages, same answer: everything is chosen from a hash of the request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dialectbias.testing._messages import chat_request, digest, last_user_text, original_turns, requested_schema

#: the property that marks the RLAIF judge schema (SPEC §4 P3)
JUDGE_MARKER = "dialect_comprehension"
LIKERT_FIELDS = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
                 "appropriate_length")

_BENGALI_WORD = re.compile(r"[\u0980-\u09FF]+")
_QUESTION_LABEL = "প্রশ্ন:"
# never echo words that could read as a refusal ("আমি দুঃখিত", "উত্তর দিতে পারি না", …)
_AVOID = {"আমি", "দুঃখিত", "দু:খিত", "না", "পারি", "পারছি", "পারব", "পারবো", "পারিনি", "বুঝতে"}
_FILLER = ("নদী", "বাংলাদেশ", "মানুষ", "জল", "শহর", "গ্রাম", "বই", "সময়")


def bengali_answer(model: str, messages: list[Any]) -> str:
    """'উত্তর: ' and 3–6 Bengali words of the question, picked and ordered by a hash of the request."""
    text = last_user_text(messages)
    question = text.rsplit(_QUESTION_LABEL, 1)[-1]
    words = [w for w in _BENGALI_WORD.findall(question) if w not in _AVOID] or list(_FILLER)
    h = digest(model, messages)
    count = 3 + h[0] % 4
    picked = [words[h[1 + i] % len(words)] for i in range(count)]
    return "উত্তর: " + " ".join(picked) + "।"


def rlaif_judgment(model: str, messages: list[Any]) -> dict[str, Any]:
    """A valid RLAIF judgment (reasoning first, confidence last) with hash-chosen scores."""
    h = digest(model, original_turns(messages))
    scores = {name: h[i] % 6 for i, name in enumerate(LIKERT_FIELDS)}
    return {
        "chain_of_thought_reasoning": f"লিপি বাংলা; প্রশ্ন বোঝা গেছে; তুলনা {h[8:12].hex()}",
        "script_valid": True,
        "refusal": False,
        **scores,
        "confidence": 1 + h[6] % 5,
    }


def qa_responder(body: dict[str, Any]) -> str | None:
    """Bengali answers to plain generation requests and RLAIF judgments to judge requests; else None."""
    request = chat_request(body)
    if request is None:
        return None
    model, messages = request
    wants_json, schema = requested_schema(body)
    if not wants_json:
        return bengali_answer(model, messages)
    properties = (schema or {}).get("properties")
    if isinstance(properties, dict) and JUDGE_MARKER in properties:
        return json.dumps(rlaif_judgment(model, messages), ensure_ascii=False)
    return None
