"""Topic labels of the usage-setting texts (German paper App. A.5, §6.4, Figures 6 and 16).

The paper asks GPT-4o "What is the high-level topic area of the following text: 'x'? Just reply with the topic
area." and then has the model cluster the free labels (its Table 5). Here an optional `labeler` role (a model
under `roles:`, like the decision probe's extractor) labels each source text once, by default choosing one topic
of a closed list under a JSON schema (`options.topics`; `options.topic_prompt: open` asks the paper's open
question instead and keeps its answer as the label, without the clustering step). A text whose data item has a
`domain` keeps it: no label request is made for it.

The label requests are a stage of the run (`label`), so a label follows the settings as they are now: the
labeler's identity, the prompt and the topic list are in the request's hash, and only the current requests are
read (changing the labeler or the list relabels; the old answers stay cached, unused). Answers that are not one
of the listed topics are counted as invalid and shown, never dropped: their texts land in the `(no valid topic)`
group of the per-topic tables.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from dialectbias.data import STANDARD, ChatMessage
from dialectbias.judges import parse_structured
from dialectbias.providers import ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage, StageYield

if TYPE_CHECKING:
    from dialectbias.store import Store
    from dialectbias.tasks.probes._probe import ProbeTask

LABELER_ROLE = "labeler"
STAGE = "label"
TEMPLATE = "probe/label"
#: the group of the per-topic tables for texts without a valid topic (invalid, failed or missing label)
NO_TOPIC = "(no valid topic)"

#: The default closed list. The paper's own cluster list (App. A.5, Table 5) is not in the text we have; it names
#: "biography" and "geography" (§6.4). This list covers what dialect-Wikipedia articles are about, with `other`.
DEFAULT_TOPICS = ["biography", "geography", "history", "politics and society", "culture and arts", "religion",
                  "science and technology", "nature and environment", "sports", "economy", "language", "other"]

#: the paper's question (App. A.5), verbatim; `topic_prompt: open`
OPEN_PROMPT = "What is the high-level topic area of the following text: '{text}'? Just reply with the topic area."
CLOSED_PROMPT = ("What is the high-level topic area of the following text: '{text}'?\n"
                 "Choose exactly one of these topics: {topics}.\n"
                 "Answer with a JSON object {{\"topic\": \"<one of the topics>\"}} and nothing else.")
OPEN_MAX_CHARS = 60


class TopicAnswer(BaseModel):
    """The labeler's JSON answer (closed list)."""

    topic: str


def topic_schema(topics: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {"topic": {"type": "string", "enum": list(topics)}},
            "required": ["topic"], "additionalProperties": False}


def label_messages(text: str, topics: list[str], mode: str) -> list[ChatMessage]:
    prompt = OPEN_PROMPT.format(text=text) if mode == "open" else \
        CLOSED_PROMPT.format(text=text, topics=", ".join(topics))
    return [{"role": "user", "content": prompt}]


@dataclass(frozen=True)
class TopicLabel:
    """The topic of one source text. `source`: domain (the data's field), labeler, or none (no labeler role);
    `status`: ok, invalid (the answer is no listed topic / not the JSON asked for), failed (the call failed),
    pending (not asked yet), stale (asked under other settings: the run has not relabelled yet), or none;
    `topic` is NO_TOPIC unless status is ok."""

    topic: str
    source: str
    status: str
    answer: str | None = None
    reason: str | None = None


def read_label(output: str, topics: list[str], mode: str) -> TopicLabel:
    """A labeler answer as a label: closed list, the JSON's `topic` must be one of `topics` (case and
    surrounding space ignored; the list's spelling is kept); open, the first line without quotes, markup and a
    final period, lowercased (an empty or overlong answer is invalid)."""
    if mode == "open":
        line = next((ln for ln in output.splitlines() if ln.strip()), "")
        label = re.sub(r"^[\s*_#\"'`]*(?:topic(?: area)?\s*:\s*)?|[\s*_\"'`.]*$", "", line, flags=re.IGNORECASE)
        label = " ".join(label.split()).lower()
        if not label or len(label) > OPEN_MAX_CHARS:
            return TopicLabel(NO_TOPIC, "labeler", "invalid", output,
                              "empty answer" if not label else f"answer over {OPEN_MAX_CHARS} characters")
        return TopicLabel(label, "labeler", "ok", output)
    parsed = parse_structured(output, TopicAnswer)
    if parsed.status == "failed":
        return TopicLabel(NO_TOPIC, "labeler", "invalid", output, f"not the JSON asked for: {parsed.error}")
    wanted = parsed.value.topic.strip().lower()
    match = next((t for t in topics if t.lower() == wanted), None)
    if match is None:
        return TopicLabel(NO_TOPIC, "labeler", "invalid", output, f"topic {parsed.value.topic!r} is not in the list")
    return TopicLabel(match, "labeler", "ok", output)


def _sources(store: Store) -> Iterator[tuple[str, str | None, str]]:
    """(source item id, its `domain`, its standard text) of each usage-setting source text, once each."""
    seen: set[str] = set()
    for item in store.iter_items():
        if item.metadata.get("setting") != "usage":
            continue
        source = str(item.metadata.get("source_item", item.id))
        if source in seen:
            continue
        seen.add(source)
        domain = item.domain if item.domain and str(item.domain).strip() else None
        yield source, domain, str(item.variants[STANDARD])


def labeler(task: ProbeTask) -> ModelConfig | None:
    return task.exp.roles.get(LABELER_ROLE)


def label_settings(task: ProbeTask) -> str:
    """What a label derives from besides the text: the labeler's identity, the prompt form, the list and the
    decoding options. Stored in each label request's meta; a label asked under other settings is `stale` (not
    used) until the next run relabels."""
    o, model = task.options, labeler(task)
    key = {"labeler": model.identity() if model else None, "topic_prompt": o.topic_prompt,
           "topics": o.topic_list if o.topic_prompt == "closed" else None,
           "temperature": o.labeler_temperature, "max_tokens": o.labeler_max_tokens}
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def label_stages(task: ProbeTask) -> list[Stage]:
    """The `label` stage when the experiment names a labeler (none otherwise)."""
    model = labeler(task)
    if model is None:
        return []
    o = task.options
    params = {"temperature": o.labeler_temperature, "max_tokens": o.labeler_max_tokens}
    settings = label_settings(task)

    def build(store: Store, labeler_model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for source, domain, text in _sources(store):
            if domain is not None:
                yield Skipped(source, kind="topic given by the data's `domain`: not labelled")
                continue
            yield RequestSpec(
                stage=STAGE, model=labeler_model, item_id=source, variant=STANDARD, template=TEMPLATE,
                params={**params, **labeler_model.params}, messages=label_messages(text, o.topic_list, o.topic_prompt),
                json_schema=topic_schema(o.topic_list) if o.topic_prompt == "closed" else None, schema_name="topic",
                meta={"topic_prompt": o.topic_prompt, "settings": settings})

    return [Stage(STAGE, [model], build)]


def topic_labels(task: ProbeTask, store: Store) -> dict[str, TopicLabel]:
    """Source item id -> its topic: the data's `domain`, else the current label request's answer read now
    (`read_label`), else `none` (no labeler) or `pending`."""
    o = task.options
    answers = {r.item_id: r for r in store.stage_results(STAGE, ok_only=False, template_prefix=TEMPLATE)}
    has_labeler = labeler(task) is not None
    settings = label_settings(task)
    out: dict[str, TopicLabel] = {}
    for source, domain, _ in _sources(store):
        if domain is not None:
            out[source] = TopicLabel(domain, "domain", "ok")
        elif not has_labeler:
            out[source] = TopicLabel(NO_TOPIC, "none", "none", reason="no `domain` and no labeler role")
        elif source not in answers or answers[source].status is None:
            out[source] = TopicLabel(NO_TOPIC, "labeler", "pending", reason="not labelled yet: run again")
        elif answers[source].meta.get("settings") != settings:
            out[source] = TopicLabel(NO_TOPIC, "labeler", "stale", reason="labelled under other settings (labeler, "
                                     "topics or prompt changed): run again to relabel")
        elif answers[source].status != "ok":
            out[source] = TopicLabel(NO_TOPIC, "labeler", "failed", reason="the labeler call failed")
        else:
            out[source] = read_label(answers[source].output or "", o.topic_list, o.topic_prompt)
    return out


def label_yield(task: ProbeTask, store: Store) -> list[StageYield]:
    """The label stage's usable results: texts with a topic (labelled or given by `domain`)."""
    model = labeler(task)
    if model is None:
        return []
    labels = list(topic_labels(task, store).values())
    given = sum(1 for lb in labels if lb.source == "domain")
    valid = sum(1 for lb in labels if lb.source == "labeler" and lb.status == "ok")
    invalid = sum(1 for lb in labels if lb.status == "invalid")
    other = len(labels) - given - valid - invalid
    detail = (f"{valid} texts labelled, {invalid} invalid labels (shown as {NO_TOPIC}), {other} failed or not "
              f"done; {given} topics given by `domain`")
    return [StageYield(STAGE, model.id, valid + invalid + given, detail)]


def source_of(item_ids: Any, store: Store) -> dict[str, str]:
    """Prompt item id -> its source item id (usage items only)."""
    wanted = set(item_ids)
    return {item.id: str(item.metadata.get("source_item", item.id)) for item in store.iter_items()
            if item.id in wanted and item.metadata.get("setting") == "usage"}


__all__ = ["DEFAULT_TOPICS", "LABELER_ROLE", "NO_TOPIC", "OPEN_PROMPT", "STAGE", "TopicLabel", "label_stages",
           "label_yield", "read_label", "source_of", "topic_labels", "topic_schema"]
