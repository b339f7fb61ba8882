"""Dialect-only transcripts: monolingual dialect text without a standard side (Sami et al. 2025 "Pipeline 1",
transcript-based RAG, cited by the Bengali dialect-bias paper §3.1; RegSpeech12 transcripts, Hassan et al.
2025). A corpus file lists them under `transcripts:`, next to its parallel `files:`::

    transcripts:
      - path: regspeech12_test_transcripts.csv   # CSV, XLSX, JSONL or Parquet, by glob
        text: transcript                         # the dialect text's column
        dialect: district                        # a column, or `dialect_value: sylhet` for a constant
        dialect_map: {Sandwip: chittagong, Narail: null}   # value -> registered dialect; null: skip
        unmapped: error                          # a value neither mapped nor a registered dialect: error | skip

A value of the dialect column is a registered dialect (or one added under the corpus's `dialects:`) when,
lower-cased with spaces as underscores, it names one (`Chittagong` → chittagong); `dialect_map` overrides
that, and maps other names. Every value is counted per file: how many rows it gave and the dialect it went
to, or that it was skipped (mapped to null, or unknown with `unmapped: skip`): nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dialectbias.dialects import language_of
from dialectbias.errors import DataError
from dialectbias.text._bn_normalize import match_key

#: what a skipped dialect value is counted as
MAPPED_TO_NULL = "dialect_map: null"
UNMAPPED = "unmapped"


def check_one_dialect_source(dialect: str | None, dialect_value: str | None) -> None:
    """A corpus file entry (`files:` or `transcripts:`) names its dialect by a column or a constant, not both."""
    if (dialect is None) == (dialect_value is None):
        raise ValueError("give exactly one of `dialect` (a column) or `dialect_value` (a constant dialect)")


class TranscriptFile(BaseModel):
    """One entry of a corpus file's `transcripts:` list."""

    model_config = ConfigDict(extra="forbid")

    path: str
    text: str = "text"
    dialect: str | None = None
    dialect_value: str | None = None
    #: a value of the dialect column (as written) -> a registered dialect, or None to skip its rows
    dialect_map: dict[str, str | None] = Field(default_factory=dict)  # keys match case-insensitively
    #: a value neither in dialect_map nor a registered dialect: an error naming file and row, or skipped (counted)
    unmapped: Literal["error", "skip"] = "error"
    split: str | None = None
    sheet: str | None = None

    @model_validator(mode="after")
    def _one_dialect_source(self) -> TranscriptFile:
        check_one_dialect_source(self.dialect, self.dialect_value)
        return self


class Transcript(BaseModel):
    """A dialect text with no standard version. `text` is kept as given; `text_norm` is its match key."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    dialect: str
    #: the dialect column's value as written (a RegSpeech12 district: `Chittagong`)
    district: str
    source: str
    split: str | None = None
    row: int
    text_norm: str


class DistrictCount(BaseModel):
    """Rows of one dialect-column value in one file, and where they went."""

    value: str
    rows: int = 0
    #: the registered dialect the value maps to; None when its rows were skipped
    dialect: str | None = None
    #: why skipped: "dialect_map: null" or "unmapped"
    skipped: str | None = None


class TranscriptCounts(BaseModel):
    """What one transcript file held: rows read, transcripts kept, rows set aside by kind, and per value of the
    dialect column (district) its rows and dialect."""

    source: str
    rows: int = 0
    transcripts: int = 0
    duplicates: int = 0
    empty: int = 0
    skipped: int = 0
    districts: list[DistrictCount] = Field(default_factory=list)

    def district(self, value: str) -> DistrictCount:
        for d in self.districts:
            if d.value == value:
                return d
        found = DistrictCount(value=value)
        self.districts.append(found)
        return found


def transcript_id(text: str, dialect: str) -> str:
    """Stable content id: a hash of the normalised text and the dialect (prefix `t`, apart from pair ids)."""
    key = "\x1f".join(("transcript", match_key(text), dialect))
    return "t" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:15]


def resolve_dialect(value: str, entry: TranscriptFile, extra: dict[str, list[str]]) -> tuple[str | None, str | None]:
    """(dialect, why skipped) of a dialect-column value: `dialect_map` first (a null: skipped), then a registered
    dialect of the same name; anything else is skipped (`unmapped: skip`) or (None, None) for an error."""
    lookup = {k.strip().lower(): v for k, v in entry.dialect_map.items()}
    if value.strip().lower() in lookup:
        mapped = lookup[value.strip().lower()]
        return (None, MAPPED_TO_NULL) if mapped is None else (mapped.strip().lower().replace(" ", "_"), None)
    name = value.strip().lower().replace(" ", "_")
    if name and language_of(name, extra) is not None:
        return name, None
    return (None, UNMAPPED) if entry.unmapped == "skip" else (None, None)


def check_map(entry: TranscriptFile, extra: dict[str, list[str]], where: str) -> None:
    """Every dialect_map target is a registered dialect (not a language, not `standard`)."""
    for value, mapped in entry.dialect_map.items():
        if mapped is not None and language_of(mapped.strip().lower().replace(" ", "_"), extra) is None:
            raise DataError(f"{where}: dialect_map {value!r}: {mapped!r} is not a registered dialect (add it under "
                            "`dialects: {<language>: [...]}` in the corpus file)")


def read_transcripts(entry: TranscriptFile, sources: Iterable[str], extra: dict[str, list[str]],
                     rows: Callable[[str], Iterator[tuple[int, dict[str, Any]]]], split_of: Callable[[str], str | None],
                     seen: set[str]) -> tuple[list[Transcript], list[TranscriptCounts]]:
    """The transcripts of one `transcripts:` entry's files, with their counts; `seen` (ids) spans the corpus."""
    out: list[Transcript] = []
    reports: list[TranscriptCounts] = []
    for source in sources:
        counts = TranscriptCounts(source=source)
        reports.append(counts)
        split = entry.split or split_of(source)
        for row, record in rows(source):
            counts.rows += 1
            where = f"{source}:{row}"
            columns = [entry.text] + ([entry.dialect] if entry.dialect else [])
            missing = [c for c in columns if c not in record]
            if missing:
                raise DataError(f"{where}: missing column(s) {', '.join(map(repr, missing))}; found: "
                                f"{', '.join(map(str, record)) or '(none)'} (set the column names under "
                                "`transcripts:` in the corpus file)")
            value = entry.dialect_value if entry.dialect_value is not None else _text(record[entry.dialect or ""])
            district = counts.district(value.strip())
            district.rows += 1
            dialect, why = resolve_dialect(value.strip(), entry, extra)
            if dialect is None and why is None:
                raise DataError(f"{where}: dialect {value!r} is not a registered dialect: map it with "
                                f"`dialect_map: {{{value.strip()}: <dialect or null>}}`, add it under `dialects:`, "
                                "or set `unmapped: skip` (its rows are then counted as skipped)")
            district.dialect, district.skipped = dialect, why
            if dialect is None:
                counts.skipped += 1
                continue
            text = _text(record[entry.text])
            if not match_key(text):
                counts.empty += 1
                continue
            tid = transcript_id(text, dialect)
            if tid in seen:
                counts.duplicates += 1
                continue
            seen.add(tid)
            counts.transcripts += 1
            out.append(Transcript(id=tid, text=text, dialect=dialect, district=value.strip(), source=source,
                                  split=split, row=row, text_norm=match_key(text)))
    return out, reports


def unused_map_keys(entry: TranscriptFile, reports: list[TranscriptCounts]) -> list[str]:
    """dialect_map keys that matched no row of the entry's files (a typo would otherwise map nothing)."""
    values = {d.value.lower() for f in reports for d in f.districts}
    return [k for k in entry.dialect_map if k.strip().lower() not in values]


def transcript_lines(reports: list[TranscriptCounts]) -> list[str]:
    """Per transcript file: rows, kept, set aside; then each dialect-column value → dialect (or skipped)."""
    lines = []
    for f in reports:
        lines.append(f"{f.source}: {f.rows:,} rows, {f.transcripts:,} transcripts, {f.duplicates:,} duplicates, "
                     f"{f.empty:,} empty, {f.skipped:,} skipped (dialect not mapped)")
        mapped = [d for d in f.districts if d.dialect is not None]
        skipped = [d for d in f.districts if d.dialect is None]
        if mapped:
            lines.append("  mapped: " + ", ".join(f"{d.value} → {d.dialect} {d.rows:,}" for d in
                                                  sorted(mapped, key=lambda d: (-d.rows, d.value))))
        if skipped:
            lines.append("  skipped: " + ", ".join(f"{d.value or '(empty)'} {d.rows:,} ({d.skipped})" for d in
                                                   sorted(skipped, key=lambda d: (-d.rows, d.value))))
    return lines


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from pandas-written files
        return ""
    return str(value)
