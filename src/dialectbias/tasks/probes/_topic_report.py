"""Per-topic tables of the stereotype probes (German paper §6.4, Figures 6 and 16; App. A.5): the usage-setting
bias per model × topic and, over all models, per topic × trait, with the topics of `_topics.topic_labels` (the
data's `domain`, else the labeler's label). Texts without a valid topic form the `(no valid topic)` group, and
the label of every text, with its source and status, is in `<task>_topic_labels.csv`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dialectbias.report import Section
from dialectbias.store import Store
from dialectbias.tasks.probes._topics import NO_TOPIC, labeler, source_of, topic_labels

if TYPE_CHECKING:
    from dialectbias.tasks.probes._probe import ProbeTask

TableFn = Callable[[pd.DataFrame, list[str]], pd.DataFrame]

TOPIC_LEGEND = {
    "topic": f"the text's topic: its `domain` field, else the labeler's label (German paper App. A.5); {NO_TOPIC} "
             "= no topic: the label was invalid, the call failed or was not made, or there is no labeler",
    "topic_source": "domain: given by the data; labeler: the labeler role's answer; none: neither",
}
LABELS_LEGEND = {
    "source_item": "the data item (its standard text was labelled)",
    "topic": TOPIC_LEGEND["topic"],
    "source": TOPIC_LEGEND["topic_source"],
    "status": "ok; invalid: the answer is not one of the listed topics (or not the JSON asked for); failed: the call "
              "failed; pending: not asked yet; stale: asked under other settings (labeler, topics, prompt), not used "
              "until `run` relabels; none: no labeler",
    "reason": "why the label is not used",
    "answer": "the labeler's answer as given",
}
COUNTS_LEGEND = {"source": LABELS_LEGEND["source"], "status": LABELS_LEGEND["status"], "n_texts": "texts"}


def with_topics(task: ProbeTask, store: Store, rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with `topic` and `topic_source` (empty for naming-setting rows)."""
    labels = topic_labels(task, store)
    sources = source_of(rows.item_id.unique(), store)
    source = rows.item_id.map(sources)
    return rows.assign(topic=source.map(lambda s: labels[s].topic if s in labels else None),
                       topic_source=source.map(lambda s: labels[s].source if s in labels else None))


def labels_table(task: ProbeTask, store: Store) -> pd.DataFrame:
    cols = ["source_item", "topic", "source", "status", "reason", "answer"]
    return pd.DataFrame([{"source_item": s, "topic": lb.topic, "source": lb.source, "status": lb.status,
                          "reason": lb.reason, "answer": lb.answer} for s, lb in topic_labels(task, store).items()],
                        columns=cols)


def topic_sections(task: ProbeTask, store: Store, rows: pd.DataFrame, out_dir: Path, *, prefix: str,
                   table: TableFn, by_model: Sequence[str], legend: dict[str, str]) -> list[Section]:
    """`<prefix>_topic_labels.csv` (every usage text's topic), `<prefix>_bias_by_topic.csv` (per `by_model` ×
    topic, e.g. model × topic: the traits pooled) and `<prefix>_bias_by_topic_trait.csv` (all models, per topic ×
    trait, as the paper's Figures 6 and 16), each made by `table` (the task's per-group statistics: n, mean,
    bootstrap CI, t-test). Nothing when the run has no usage text."""
    usage = rows[rows.setting == "usage"]
    labels = labels_table(task, store)
    if usage.empty or labels.empty:
        return []
    labels.to_csv(out_dir / f"{prefix}_topic_labels.csv", index=False)
    counts = Counter(zip(labels.source, labels.status, strict=True))
    count_table = pd.DataFrame([{"source": s, "status": st, "n_texts": n} for (s, st), n in sorted(counts.items())],
                               columns=["source", "status", "n_texts"])
    usage = usage.assign(topic=usage.topic.fillna(NO_TOPIC))
    per_model = table(usage, [*by_model, "topic"])
    per_model.to_csv(out_dir / f"{prefix}_bias_by_topic.csv", index=False)
    extra = [c for c in by_model if c not in ("model",)]
    per_trait = table(usage, [*extra, "topic", "trait"])
    per_trait.to_csv(out_dir / f"{prefix}_bias_by_topic_trait.csv", index=False)
    invalid = int((labels.status == "invalid").sum())
    model = labeler(task)
    who = (f"labelled by {model.id} ({task.options.topic_prompt} prompt"
           + (f", {len(task.options.topic_list)} topics" if task.options.topic_prompt == "closed" else "") + ")"
           if model is not None else "no labeler role")
    note = (f"Topics: the data's `domain` where given, else {who}. {invalid} invalid label(s); texts without a "
            f"valid topic are the {NO_TOPIC} group. Every text's label is in {prefix}_topic_labels.csv.")
    full = {**legend, **TOPIC_LEGEND}
    return [
        Section(heading="Topic labels of the usage texts (German paper App. A.5)", table=count_table,
                legend=COUNTS_LEGEND, text=note),
        Section(heading="Bias per model and topic (traits pooled)", table=per_model,
                legend={k: v for k, v in full.items() if k != "topic_source"}),
        Section(heading="Bias per topic and trait, all models (German paper Figures 6 and 16)", table=per_trait,
                legend={k: v for k, v in full.items() if k != "topic_source"}),
    ]


__all__ = ["LABELS_LEGEND", "TOPIC_LEGEND", "labels_table", "topic_sections", "with_topics"]
