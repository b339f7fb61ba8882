"""A deterministic vision-language responder for the test server: VQA answers, captions, commonsense short
answers (csu) and caption judgments.

Use ``TestServer(responder="dialectbias.testing:vlm_responder")``. It checks the images it receives (the
server has already checked that each `image_url` part is a base64 data URL of the declared type): every
image must decode (Pillow), and a prompt must carry exactly as many images as it expects — one, plus one
per `Example N:` in a few-shot prompt. A request that fails the check gets `IMAGE CHECK FAILED: <why>`,
which no parser reads as an answer, so a test sees it in the scores and in the store.

Answers are chosen from a hash of (model, image bytes, prompt), so a different image gives a different
answer, and written in the formats real models use: `Index: i, Answer: "…"`, with markdown, with the
index in Bengali digits, without the index, with a wrong index but the right text, a CoT with English
reasoning and a `Final Answer:` line, and now and then something unparseable. Captions are written in the
language the prompt asks for (Bangla, Hindi, Urdu, English), sometimes in English against the prompt (a
language-constraint violation). Commonsense prompts get a few words of the question, sometimes the
abstention phrase the prompt names (now and then with a danda), an `Answer:` label, markdown, English words, or
(CoT) English reasoning and a `Final Answer:` line. Caption-rubric judge requests get valid judgments.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from typing import Any

from dialectbias.testing._messages import chat_request, requested_schema

IMAGE_CHECK_FAILED = "IMAGE CHECK FAILED"
#: the property that marks a caption-rubric judge schema
CAPTION_MARKERS = ("relevance", "overall")
_EXAMPLE = re.compile(r"^Example \d+:", re.MULTILINE)
_LIST = re.compile(r"\[[^\[\]]*\]")
_BENGALI_DIGITS = "০১২৩৪৫৬৭৮৯"
CAPTION_WORDS = {
    "Bangla": ["ছবিতে", "মানুষ", "নদী", "গ্রাম", "উৎসব", "খাবার", "সুন্দর", "দৃশ্য", "রঙিন", "আকাশ"],
    "Hindi": ["चित्र", "में", "लोग", "नदी", "गाँव", "उत्सव", "भोजन", "सुंदर", "दृश्य", "रंगीन"],
    "Urdu": ["تصویر", "میں", "لوگ", "دریا", "گاؤں", "میلہ", "کھانا", "خوبصورت", "منظر", "رنگین"],
    "English": ["people", "gather", "near", "a", "river", "in", "a", "colourful", "village", "festival"],
}
_ENDS = {"Bangla": "।", "Hindi": "।", "Urdu": "۔", "English": "."}


def _digest(*parts: Any) -> bytes:
    """Hash of the parts (not `_messages.digest`: this canonical form is what every VLM answer is picked by)."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str).encode()).digest()


def _parts(messages: list[Any]) -> tuple[str, list[str]]:
    """(all text, one problem or '' per image) of the user messages' parts."""
    texts, images = [], []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content if isinstance(content, list) else ():
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif part.get("type") == "image_url":
                images.append(_image_problem(str(part["image_url"]["url"])))
    return "\n".join(texts), images


_CHECKED: dict[str, str] = {}  # sha256 -> the check's finding (the same images come back many times)


def _image_problem(url: str) -> str:
    """The image's sha256 when the data URL holds an image Pillow decodes, else `! <why not>`."""
    from PIL import Image

    data = base64.b64decode(url.partition(",")[2])
    sha = hashlib.sha256(data).hexdigest()
    if sha not in _CHECKED:
        try:
            with Image.open(io.BytesIO(data)) as img:
                img.draft("RGB", (64, 64))  # JPEG: decode every block at a reduced scale (fast, still complete)
                img.load()
                _CHECKED[sha] = sha if img.width >= 1 and img.height >= 1 else "! empty image"
        except Exception as exc:
            _CHECKED[sha] = f"! image does not decode ({type(exc).__name__})"
        if len(_CHECKED) > 4096:
            _CHECKED.pop(next(iter(_CHECKED)))
    return _CHECKED[sha]


def _check(text: str, images: list[str]) -> str | None:
    bad = [p[2:] for p in images if p.startswith("! ")]
    if bad:
        return bad[0]
    expected = 1 + len(_EXAMPLE.findall(text))
    if len(images) != expected:
        return f"{len(images)} image(s) for a prompt expecting {expected}"
    return None


def _language(text: str) -> str:
    m = re.search(r"in (?:the [\w ]+ dialect of )?(Bangla|Hindi|Urdu|English)", text)
    return m[1] if m else "Bangla"


def vqa_answer(model: str, text: str, images: list[str]) -> str:
    lists = _LIST.findall(text)
    try:
        options = json.loads(lists[-1]) if lists else []
    except json.JSONDecodeError:
        options = []
    if not options:
        return "I do not see any answer choices."
    h = _digest(model, images[-1], text)
    index = h[0] % len(options)
    answer = options[index]
    style = h[1] % 16
    if "Reasoning_En" in text:
        reasoning = (f"Reasoning_En:\nStep 1: The image shows a scene ({h[2:5].hex()}).\n"
                     f"Step 2: Option {index} fits what is visible.\nStep 3: The other options do not match.\n"
                     "Step 4: So the answer is the matching option.\n\n")
        if style == 0:
            return reasoning + "Final Answer: I am not sure."
        if style < 4:
            return reasoning + f"**Final Answer:** Index: {index}, Answer: \"{answer}\""
        return reasoning + f"Final Answer: Index: {index}, Answer: \"{answer}\""
    if style == 0:
        return "Sorry, I cannot determine this from the image."
    if style == 1:
        digits = str(index).translate(str.maketrans("0123456789", _BENGALI_DIGITS))
        return f"**Index:** {digits}, **Answer:** \"{answer}\""
    if style == 2:
        return f"Answer: \"{answer}\""
    if style == 3:
        wrong = (index + 1) % len(options)
        return f"Index: {wrong}, Answer: \"{answer}\""
    if style == 4:
        return answer
    return f"Index: {index}, Answer: \"{answer}\""


def caption_text(model: str, text: str, images: list[str]) -> str:
    h = _digest(model, images[-1], text)
    language = _language(text)
    if language != "English" and h[0] % 8 == 0:
        language = "English"  # a language-constraint violation
    words = CAPTION_WORDS[language]
    count = 4 + h[1] % 4
    return " ".join(words[h[2 + i] % len(words)] for i in range(count)) + _ENDS[language]


_ABSTAIN = re.compile(r"respond exactly with: (.+)|the final answer is exactly: (.+)")
_QUESTION = re.compile(r"^Question: \"?(.+?)\"?$", re.MULTILINE)


def csu_answer(model: str, text: str, images: list[str]) -> str:
    """A short answer to a commonsense prompt, in one of the formats real models use (see the module doc)."""
    h = _digest(model, images[-1], text)
    abstain = _ABSTAIN.search(text)
    phrase = (abstain[1] or abstain[2]).strip() if abstain else "?"
    questions = _QUESTION.findall(text)
    words = (questions[-1] if questions else "").rstrip("?।").split()
    start = h[2] % max(1, len(words) - 1)
    answer = " ".join(words[start:start + 2 + h[3] % 2]) or phrase
    style = h[1] % 16
    if style < 3:
        answer = phrase
    elif style == 3:
        answer = phrase + "।"
    elif style == 4:
        answer = f"উত্তর: {answer}"
    elif style == 5:
        answer = f"**{answer}**"
    elif style == 6:
        answer = "I think it is a festival"
    if "Reasoning_En" in text:
        return (f"Reasoning_En:\nStep 1: The image shows a scene ({h[4:7].hex()}).\nStep 2: The question asks "
                f"about it.\nStep 3: So the answer follows.\n\nFinal Answer: {answer}")
    return answer


def caption_judgment(model: str, messages: list[Any]) -> dict[str, Any]:
    h = _digest(model, messages)
    values = {name: round((h[i] % 101) / 100, 2) for i, name in
              enumerate(("relevance", "clarity", "conciseness", "creativity", "overall"))}
    return {**values, "explanation": f"compared with the reference ({h[8:11].hex()})"}


def vlm_responder(body: dict[str, Any]) -> str | None:
    """VQA answers and captions to image prompts (after checking the images), caption judgments to
    caption-rubric judge requests; None (the server's echo) for anything else."""
    request = chat_request(body)
    if request is None:
        return None
    model, messages = request
    wants_json, schema = requested_schema(body)
    text, images = _parts(messages)
    if wants_json:
        properties = (schema or {}).get("properties") or {}
        if all(k in properties for k in CAPTION_MARKERS):
            bad = [p[2:] for p in images if p.startswith("! ")]
            if bad:
                return f"{IMAGE_CHECK_FAILED}: {bad[0]}"
            return json.dumps(caption_judgment(model, messages), ensure_ascii=False)
        return None
    is_vqa = "multiple-choice" in text
    is_csu = "commonsense reasoning" in text
    is_caption = "caption" in text.lower()
    if not (is_vqa or is_csu or is_caption):
        return None
    problem = _check(text, images)
    if problem:
        return f"{IMAGE_CHECK_FAILED}: {problem}"
    if is_csu:
        return csu_answer(model, text, images)
    return vqa_answer(model, text, images) if is_vqa else caption_text(model, text, images)
