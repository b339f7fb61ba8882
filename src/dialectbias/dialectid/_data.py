"""Training units for dialect identification: sentences with a label and a group.

- Corpus files (`dialectbias.data.load_corpus`): each pair's dialect text → the pair's dialect, its standard
  text → `standard` (once: Vashantor's five files share their standard side). The group is the standard
  sentence, so a standard sentence and all its dialect versions fall on the same side of the split.
- Transcript files (RegSpeech12: CSV or XLSX with a district and a transcript column): each transcript is split
  into sentences (at । ? ! and line breaks; `<>` markers dropped), labelled with its district; the group is the
  transcript, so one utterance never lies on both sides.

Set aside and counted, per source: empty units, units shorter than `min_chars` letters, duplicates (same
match key and label), dialect texts equal to their standard text (no dialect signal), standard sides shared by
several pairs (kept once), and ambiguous texts (the same match key under several labels: all copies dropped).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from dialectbias.dialectid._features import prepare
from dialectbias.dialectid._labels import canonical_label
from dialectbias.dialects import STANDARD, known_variants
from dialectbias.errors import DataError

#: sentence ends in a transcript (danda, question and exclamation marks, double danda, line breaks)
_SENTENCE_END = re.compile(r"(?<=[।॥?!])(?![।॥?!])\s*|\s*[\r\n]+\s*")
#: transcription markers: `<>` (an unintelligible stretch) and tags such as `<noise>`
_MARKER = re.compile(r"<[^<>\n]{0,30}>")
DISTRICT_COLUMNS = ("district", "dialect", "label", "region")
TEXT_COLUMNS = ("transcript", "transcripts", "text", "sentence", "dialect_text")
ID_COLUMNS = ("file_name", "id", "utterance_id")
SKIP_KINDS = {
    "empty": "empty",
    "too_short": "shorter than min_chars letters",
    "duplicate": "duplicate (same text and label)",
    "identical": "dialect text equals its standard text (no dialect signal)",
    "shared_standard": "standard side shared by several pairs (kept once)",
    "ambiguous": "same text under several labels (all copies dropped)",
}


@dataclass(frozen=True)
class Unit:
    """One training/evaluation sentence."""

    text: str
    key: str  # the features' text form (`prepare`): what duplicates are judged on
    label: str
    group: str
    source: str


class SourceCounts(BaseModel):
    """What one source file gave: units kept per label and units set aside by kind."""

    source: str
    kind: str  # corpus | transcripts
    read: int = 0  # pairs or transcripts read
    kept: dict[str, int] = Field(default_factory=dict)
    skipped: dict[str, int] = Field(default_factory=dict)

    def skip(self, kind: str, n: int = 1) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + n


def split_sentences(text: str) -> list[str]:
    """A transcript's sentences: markers dropped, split after । ॥ ? ! and at line breaks, spaces collapsed."""
    text = _MARKER.sub(" ", text)
    parts = (" ".join(p.split()) for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def letters(key: str) -> int:
    """Characters of a prepared text other than spaces."""
    return len(key) - key.count(" ")


class UnitCollector:
    """Collects units from sources, deduplicating and counting what it sets aside."""

    def __init__(self, min_chars: int) -> None:
        self.min_chars = min_chars
        self.sources: list[SourceCounts] = []
        self._units: dict[tuple[str, str], Unit] = {}
        self._where: dict[tuple[str, str], SourceCounts] = {}

    def add(self, counts: SourceCounts, text: str, label: str, group: str, *, standard_side: bool = False) -> None:
        key = prepare(text)
        if not key:
            counts.skip("empty")
            return
        if letters(key) < self.min_chars:
            counts.skip("too_short")
            return
        if (key, label) in self._units:
            counts.skip("shared_standard" if standard_side else "duplicate")
            return
        self._units[(key, label)] = Unit(text=" ".join(text.split()), key=key, label=label, group=group,
                                         source=counts.source)
        self._where[(key, label)] = counts
        counts.kept[label] = counts.kept.get(label, 0) + 1

    def units(self) -> list[Unit]:
        """The kept units, ambiguous texts (a key under several labels) dropped and counted at their source."""
        labels_of = Counter(key for key, _ in self._units)
        out = []
        for (key, label), unit in self._units.items():
            if labels_of[key] > 1:
                counts = self._where[(key, label)]
                counts.kept[label] -= 1
                if not counts.kept[label]:
                    del counts.kept[label]
                counts.skip("ambiguous")
                continue
            out.append(unit)
        return out


def add_corpus(collector: UnitCollector, path: Path) -> SourceCounts:
    """The dialect and standard sides of a corpus file's pairs."""
    from dialectbias.data import load_corpus

    corpus = load_corpus(path)
    counts = SourceCounts(source=str(path), kind="corpus")
    collector.sources.append(counts)
    for pair in corpus.pairs:
        counts.read += 1
        group = f"standard:{prepare(pair.standard)}"
        collector.add(counts, pair.standard, STANDARD, group, standard_side=True)
        if pair.dialect_norm == pair.standard_norm:
            counts.skip("identical")
            continue
        collector.add(counts, pair.dialect_text, canonical_label(pair.dialect), group)
    if corpus.report.empty:
        counts.skip("empty", corpus.report.empty)
    if corpus.report.duplicates:
        counts.skip("duplicate", corpus.report.duplicates)
    return counts


def add_transcripts(collector: UnitCollector, path: Path, extra_labels: frozenset[str] = frozenset()) -> SourceCounts:
    """The sentences of a transcript file (CSV or XLSX: a district and a transcript column), one group per row."""
    counts = SourceCounts(source=str(path), kind="transcripts")
    collector.sources.append(counts)
    known = known_variants() | extra_labels
    for row, record in _transcript_rows(path):
        text_col, label_col, id_col = _columns(path, record)
        counts.read += 1
        raw_label = record.get(label_col)
        text = record.get(text_col)
        if raw_label is None or not str(raw_label).strip():
            raise DataError(f"{path}:{row}: column {label_col!r} is empty (every transcript needs its district)")
        label = canonical_label(str(raw_label))
        if label not in known:
            raise DataError(f"{path}:{row}: district {raw_label!r} is not in the dialect registry; known Bengali "
                            "dialects: " + ", ".join(sorted(n for n in known if n != STANDARD)))
        utterance = str(record.get(id_col) or "").strip() if id_col else ""
        group = f"transcript:{path.name}:{utterance or row}"
        sentences = split_sentences(str(text)) if text is not None and text == text else []
        if not sentences:
            counts.skip("empty")
        for sentence in sentences:
            collector.add(counts, sentence, label, group)
    if not counts.read:
        raise DataError(f"{path}: no rows")
    return counts


def _columns(path: Path, record: dict[str, Any]) -> tuple[str, str, str | None]:
    lower = {str(k).strip().lower(): k for k in record}
    text = next((lower[c] for c in TEXT_COLUMNS if c in lower), None)
    label = next((lower[c] for c in DISTRICT_COLUMNS if c in lower), None)
    if text is None or label is None:
        raise DataError(f"{path}: a transcript file needs a district column ({', '.join(DISTRICT_COLUMNS)}) and a "
                        f"text column ({', '.join(TEXT_COLUMNS)}); found: {', '.join(map(str, record)) or '(none)'}")
    return str(text), str(label), next((str(lower[c]) for c in ID_COLUMNS if c in lower), None)


def _transcript_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    from dialectbias.data import read_csv_rows, read_xlsx_rows

    if not path.is_file():
        raise DataError(f"{path}: transcript file not found")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from read_csv_rows(path)
    elif suffix == ".xlsx":
        yield from read_xlsx_rows(path, None)
    else:
        raise DataError(f"{path}: unsupported transcript format {path.suffix!r}; use .csv or .xlsx")
