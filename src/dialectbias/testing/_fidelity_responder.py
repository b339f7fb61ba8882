"""A test-server responder for translation-fidelity judges (`dialectbias.testing:fidelity_responder`).

It reads the package's translation_quality judge prompt (`Human reference (…): "…"` and `Machine translation
(…): "…"` lines) and answers a valid `translation_fidelity` judgment whose inaccuracy count is the number of
translation words not in the reference, or of reference words it lacks, whichever is larger (so its scores
follow how far the translation is from the reference, as a real judge's should), scored by the rubric's map.
For exactly one inaccuracy it answers 9, over the rubric's ceiling of 7 (a lenient judge's typical slip), so
the code's clipping is exercised end to end. Every other request goes to `qa_responder`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dialectbias.testing._messages import last_user_text, requested_schema
from dialectbias.testing._qa_responder import qa_responder

_LINE = re.compile(r'^(Human reference|Machine translation) \([^)]*\): (".*")$', re.MULTILINE)
#: inaccuracy count -> score within the rubric's ceilings (Bengali dialect-bias paper App. A, Step 3)
_SCORES = {0: 10, 2: 6, 3: 4}


def fidelity_judgment(reference: str, translation: str) -> dict[str, Any]:
    ref_words = set(reference.replace("।", " ").split())
    words = translation.replace("।", " ").split()
    wrong = [w for w in words if w not in ref_words]
    count = max(len(wrong), len(ref_words - set(words)))  # a substitution is one inaccuracy, not two
    score = 9 if count == 1 else _SCORES.get(count, 2 if translation.strip() else 0)
    return {"chain_of_thought_reasoning": f"reference read; translation read; {count} inaccurate word(s)",
            "exempt_differences_found": "", "inaccurate_words": ", ".join(f"{w} (not in the reference)" for w in wrong),
            "inaccuracy_count": count, "meaning_preserved": "yes" if count == 0 else ("partial" if count < 3 else "no"),
            "score_integer": score, "score_rationale": f"{count} inaccuracies under the rubric's ceilings"}


def fidelity_responder(body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    wants_json, schema = requested_schema(body)
    properties = (schema or {}).get("properties") or {}
    if isinstance(messages, list) and wants_json and "inaccuracy_count" in properties:
        found = dict(_LINE.findall(last_user_text(messages)))
        if len(found) == 2:
            reference = json.loads(found["Human reference"])
            translation = json.loads(found["Machine translation"])
            judgment = fidelity_judgment(reference, translation)
            return json.dumps(judgment, ensure_ascii=False)
    return qa_responder(body)
