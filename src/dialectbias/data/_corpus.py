"""Parallel standard/dialect corpora from a corpus file (SPEC §4 P1; Bengali paper §3.1.1).

A corpus file (YAML) names data files by glob, relative to itself, and maps their columns::

    name: vashantor-train
    files:
      - path: "data/Train/*.csv"       # CSV, XLSX, JSONL, Parquet, or hf://org/name?split=train
        standard: standard_text        # column names
        dialect_text: dialect_text
        dialect: dialect               # a column; or `dialect_value: sylhet` for a constant
        split: train                   # optional; default: train/test/validation read from the file name
    dialects: {bn: [my_dialect]}       # optional registry additions
    drop_identical: false              # optional: drop rows whose dialect text equals the standard text
    transcripts:                       # optional: dialect-only text, no standard side (`_transcripts`)
      - path: "regspeech12_test_transcripts.csv"
        text: transcript
        dialect: district

Every pair keeps its original texts; ids hash the normalised texts, so editing a corpus keeps the ids of the
pairs it did not touch. Duplicates (same id), empty rows and rows whose dialect text equals the standard text
are counted per file in `Corpus.report`.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import re
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dialectbias._yaml import load_yaml
from dialectbias.data._corpus_fingerprint import CorpusFingerprint, make_fingerprint
from dialectbias.data._loaders import _rows_hf, _rows_parquet, read_jsonl
from dialectbias.data._transcripts import (
    Transcript,
    TranscriptCounts,
    TranscriptFile,
    check_map,
    check_one_dialect_source,
    read_transcripts,
    transcript_lines,
    unused_map_keys,
)
from dialectbias.dialects import known_variants, unknown_variant_message
from dialectbias.errors import DataError, read_text_file, validation_problems
from dialectbias.text._bn_normalize import match_key

_SPLIT_WORDS = {"train": "train", "training": "train", "test": "test", "testing": "test", "validation": "validation",
                "valid": "validation", "val": "validation", "dev": "validation"}
_SPLIT_RE = re.compile(r"(?<![a-z])(" + "|".join(sorted(_SPLIT_WORDS, key=len, reverse=True)) + r")(?![a-z])")
_FORMATS = (".csv", ".xlsx", ".jsonl", ".ndjson", ".parquet")


class CorpusFile(BaseModel):
    """One entry of a corpus file's `files:` list."""

    model_config = ConfigDict(extra="forbid")

    path: str
    standard: str = "standard"
    dialect_text: str = "dialect_text"
    dialect: str | None = None
    dialect_value: str | None = None
    split: str | None = None
    sheet: str | None = None

    @model_validator(mode="after")
    def _one_dialect_source(self) -> CorpusFile:
        check_one_dialect_source(self.dialect, self.dialect_value)
        return self


class CorpusSpec(BaseModel):
    """A corpus file: its name, data files and options."""

    model_config = ConfigDict(extra="forbid")

    name: str
    files: list[CorpusFile] = Field(min_length=1)
    dialects: dict[str, list[str]] = Field(default_factory=dict)
    drop_identical: bool = False
    #: dialect-only texts (no standard side): style context for the translator (Bengali paper §3.1, Pipeline 1)
    transcripts: list[TranscriptFile] = Field(default_factory=list)


class ParallelPair(BaseModel):
    """A standard sentence and its dialect version. Texts are kept as given; `*_norm` hold the match keys."""

    model_config = ConfigDict(frozen=True)

    id: str
    standard: str
    dialect_text: str
    dialect: str
    source: str
    split: str | None = None
    row: int
    standard_norm: str
    dialect_norm: str


class FileCounts(BaseModel):
    """What one data file held: rows read, pairs kept, and rows set aside by kind."""

    source: str
    rows: int = 0
    pairs: int = 0
    duplicates: int = 0
    empty: int = 0
    identical: int = 0
    identical_dropped: int = 0


class CorpusReport(BaseModel):
    """Counts per file and in total."""

    files: list[FileCounts] = Field(default_factory=list)
    #: the `transcripts:` files, with their rows per dialect-column value (district) and its dialect
    transcript_files: list[TranscriptCounts] = Field(default_factory=list)
    #: `dialect_map` keys that matched no row ("transcripts[i]: key")
    unused_map_keys: list[str] = Field(default_factory=list)

    def total(self, field: str) -> int:
        return sum(getattr(f, field) for f in self.files)

    @property
    def pairs(self) -> int:
        return self.total("pairs")

    @property
    def duplicates(self) -> int:
        return self.total("duplicates")

    @property
    def empty(self) -> int:
        return self.total("empty")

    @property
    def identical(self) -> int:
        return self.total("identical")

    def lines(self) -> list[str]:
        """One summary line per file, then the total."""
        out = [f"{f.source}: {f.rows:,} rows, {f.pairs:,} pairs, {f.duplicates:,} duplicates, {f.empty:,} empty, "
               f"{f.identical:,} dialect = standard" + (f" ({f.identical_dropped:,} dropped)"
                                                        if f.identical_dropped else "") for f in self.files]
        out.append(f"total: {self.total('rows'):,} rows, {self.pairs:,} pairs, {self.duplicates:,} duplicates, "
                   f"{self.empty:,} empty, {self.identical:,} dialect = standard")
        return out

    def warnings(self) -> list[str]:
        """One line per kind of row that was set aside or carries no dialect signal, with counts per file."""
        lines = []
        for field, what in (("duplicates", "duplicate pair(s) skipped (same standard, dialect text and dialect)"),
                            ("empty", "row(s) skipped: standard or dialect text empty"),
                            ("identical", "pair(s) whose dialect text equals the standard text (no dialect signal)"),
                            ("identical_dropped", "of those dropped (drop_identical: true)")):
            per_file = [(f.source, getattr(f, field)) for f in self.files if getattr(f, field)]
            if per_file:
                named = "; ".join(f"{Path(src).name} {n:,}" for src, n in per_file)
                lines.append(f"{self.total(field):,} {what}: {named}")
        for field, what in (("duplicates", "duplicate transcript(s) skipped (same text and dialect)"),
                            ("empty", "transcript row(s) skipped: text empty"),
                            ("skipped", "transcript row(s) skipped: dialect not mapped (see the district lines)")):
            per_file = [(f.source, getattr(f, field)) for f in self.transcript_files if getattr(f, field)]
            if per_file:
                named = "; ".join(f"{Path(src).name} {n:,}" for src, n in per_file)
                lines.append(f"{sum(n for _, n in per_file):,} {what}: {named}")
        lines += [f"{key}: matched no row (dialect_map keys match the dialect column's values, ignoring case)"
                  for key in self.unused_map_keys]
        return lines

    def transcript_lines(self) -> list[str]:
        """Per transcript file: rows, kept, set aside, and each district's dialect (or why skipped)."""
        return transcript_lines(self.transcript_files)


class Corpus(BaseModel):
    """A loaded parallel corpus."""

    name: str
    path: Path | None = None
    pairs: list[ParallelPair]
    #: dialect-only texts of the `transcripts:` entries
    transcripts: list[Transcript] = Field(default_factory=list)
    report: CorpusReport
    #: the spec and data files it was read from (what a retrieval index records)
    fingerprint: CorpusFingerprint | None = None

    def dialects(self) -> list[str]:
        return sorted({p.dialect for p in self.pairs})

    def splits(self) -> list[str]:
        return sorted({p.split for p in self.pairs if p.split is not None})

    def require_splits(self, names: Iterable[str], option: str = "--split", *, absent_ok: bool = False) -> None:
        """DataError naming each of `names` that no pair of the corpus has, with the splits it has: a typo
        such as `trian` would otherwise select (or leave out) nothing, silently. `absent_ok` (a split to leave
        out): a standard split name (train, test, validation) the corpus lacks is fine, nothing to leave out."""
        allowed = set(self.splits()) | (set(_SPLIT_WORDS.values()) if absent_ok else set())
        unknown = sorted(set(names) - allowed)
        if unknown:
            raise DataError(f"{self.path or self.name}: {option} {', '.join(unknown)}: no such split in the corpus "
                            f"(it has: {', '.join(self.splits()) or 'no split names'})")


def pair_id(standard: str, dialect_text: str, dialect: str) -> str:
    """Stable content id: a hash of the normalised standard text, the normalised dialect text and the dialect."""
    key = "\x1f".join((match_key(standard), match_key(dialect_text), dialect))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def split_from_name(name: str) -> str | None:
    """train / test / validation when a file name says so (`Sylhet Train Translation.csv` → train)."""
    found = _SPLIT_RE.findall(Path(name).stem.lower().replace("_", " ").replace("-", " "))
    return _SPLIT_WORDS[found[-1]] if found else None


def read_corpus_spec(path: str | Path) -> CorpusSpec:
    """The corpus file, validated; errors name the file and key at fault."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: corpus file not found")
    raw, _ = load_yaml(read_text_file(path, DataError, "corpus file"), str(path), DataError)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: a corpus file is a mapping with `name` and `files` (see `dialectbias index --help`)")
    try:
        return CorpusSpec.model_validate(raw)
    except ValidationError as exc:
        problems = [line.strip().removeprefix("- ") for line in validation_problems(exc)]
        raise DataError(f"{path}: " + "; ".join(problems)) from None


def corpus_files(path: str | Path) -> list[str]:
    """The data files a corpus file reads (paths, or hf:// URIs), in reading order."""
    path = Path(path)
    return [s for entry in read_corpus_spec(path).files for s in _expand(entry, path.parent, path)]


def corpus_fingerprint(path: str | Path) -> CorpusFingerprint:
    """The corpus file's spec and the content of every data file it reads (`_corpus_fingerprint`), without
    reading their rows."""
    path = Path(path)
    spec = read_corpus_spec(path)
    entries: list[CorpusFile | TranscriptFile] = [*spec.files, *spec.transcripts]
    sources = [s for entry in entries for s in _expand(entry, path.parent, path)]
    return _fingerprint(spec, sources, path)


def _fingerprint(spec: CorpusSpec, sources: list[str], path: Path) -> CorpusFingerprint:
    """The normalised spec (no `name`; `transcripts` only when given, so an index of a corpus without them
    keeps its fingerprint) and the data files, pair files first, then transcript files."""
    normalised = spec.model_dump(mode="json", exclude={"name"} if spec.transcripts else {"name", "transcripts"})
    normalised["dialects"] = {lang: sorted(names) for lang, names in sorted(spec.dialects.items())}
    return make_fingerprint(normalised, sources, path.parent)


def load_corpus(path: str | Path) -> Corpus:
    """Read a corpus file and every data file it names; errors name the file, row and column at fault."""
    path = Path(path)
    spec = read_corpus_spec(path)
    expanded = [(entry, _expand(entry, path.parent, path)) for entry in spec.files]
    expanded_t = [(entry, _expand(entry, path.parent, path)) for entry in spec.transcripts]
    prints = _fingerprint(spec, [s for _, sources in [*expanded, *expanded_t] for s in sources], path)
    known = known_variants(spec.dialects)
    report = CorpusReport()
    pairs: list[ParallelPair] = []
    seen: set[str] = set()
    for entry, sources in expanded:
        for source in sources:
            counts = FileCounts(source=source)
            report.files.append(counts)
            split = entry.split or (_hf_split(source) if source.startswith("hf://") else split_from_name(source))
            for row, record in _rows(source, entry):
                counts.rows += 1
                pair = _to_pair(record, entry, source, row, split, known)
                if pair is None:
                    counts.empty += 1
                    continue
                if pair.id in seen:
                    counts.duplicates += 1
                    continue
                seen.add(pair.id)
                if pair.standard_norm == pair.dialect_norm:
                    counts.identical += 1
                    if spec.drop_identical:
                        counts.identical_dropped += 1
                        continue
                counts.pairs += 1
                pairs.append(pair)
    if not pairs:
        raise DataError(f"{path}: no usable pairs in {report.total('rows'):,} rows "
                        f"({report.empty:,} empty, {report.duplicates:,} duplicates)")
    transcripts: list[Transcript] = []
    seen_t: set[str] = set()
    for i, (t_entry, sources) in enumerate(expanded_t):
        check_map(t_entry, spec.dialects, f"{path}: transcripts[{i}]")
        found, counts_t = read_transcripts(t_entry, sources, spec.dialects, partial(_rows, entry=t_entry),
                                           _split_of, seen_t)
        transcripts += found
        report.transcript_files += counts_t
        report.unused_map_keys += [f"{path.name}: transcripts[{i}].dialect_map {key!r}"
                                   for key in unused_map_keys(t_entry, counts_t)]
    if spec.transcripts and not transcripts:
        raise DataError(f"{path}: `transcripts:` gave no usable transcript in "
                        f"{sum(f.rows for f in report.transcript_files):,} rows: "
                        + "; ".join(transcript_lines(report.transcript_files)))
    return Corpus(name=spec.name, path=path.resolve(), pairs=pairs, transcripts=transcripts, report=report,
                  fingerprint=prints)


def _split_of(source: str) -> str | None:
    return _hf_split(source) if source.startswith("hf://") else split_from_name(source)


def _expand(entry: CorpusFile | TranscriptFile, base: Path, corpus_path: Path) -> list[str]:
    if entry.path.startswith("hf://"):
        return [entry.path]
    pattern = entry.path if Path(entry.path).is_absolute() else str(base / entry.path)
    matches = sorted(m for m in glob.glob(pattern, recursive=True) if Path(m).is_file())
    if not matches:
        raise DataError(f"{corpus_path}: files[].path {entry.path!r} matches no file (relative to {base})")
    for m in matches:
        if Path(m).suffix.lower() not in _FORMATS:
            raise DataError(f"{m}: unsupported corpus format {Path(m).suffix!r}; use .csv, .xlsx, .jsonl, .parquet "
                            "or hf://")
    return matches


def _hf_split(uri: str) -> str | None:
    match = re.search(r"[?&]split=([^&]+)", uri)
    return _SPLIT_WORDS.get(match.group(1).lower(), match.group(1)) if match else "train"


def _rows(source: str, entry: CorpusFile | TranscriptFile) -> Iterator[tuple[int, dict[str, Any]]]:
    if source.startswith("hf://"):
        yield from _rows_hf(source)
        return
    path = Path(source)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from read_csv_rows(path)
    elif suffix in (".jsonl", ".ndjson"):
        yield from read_jsonl(path)
    elif suffix == ".parquet":
        yield from _rows_parquet(path)
    else:
        yield from read_xlsx_rows(path, entry.sheet)


def read_csv_rows(path: Path, *, strict: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of a UTF-8 CSV file (a BOM is fine), header names stripped; `strict`: a row with more
    fields than the header is an error naming the line (else the extra fields are under the key None)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is not None:
        reader.fieldnames = [name.strip() for name in reader.fieldnames]
    for row in reader:
        if strict and None in row:
            raise DataError(f"{path}:{reader.line_num}: more fields than the header has")
        yield reader.line_num, row


def read_xlsx_rows(path: Path, sheet: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) of an .xlsx sheet (the first unless named), the first row as header."""
    try:
        import openpyxl
    except ImportError:
        raise DataError(f"{path}: reading .xlsx corpora needs: pip install 'dialectbias[retrieval]'") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:
        raise DataError(f"{path}: not a readable .xlsx file ({type(exc).__name__}: {exc})") from None
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise DataError(f"{path}: no sheet {sheet!r} (sheets: {', '.join(book.sheetnames)})")
        rows = (book[sheet] if sheet else book.worksheets[0]).iter_rows(values_only=True)
        header = [str(h).strip() if h is not None else "" for h in next(rows, ())]
        for i, values in enumerate(rows, start=2):
            yield i, dict(zip(header, values, strict=False))
    finally:
        book.close()


def _to_pair(record: dict[str, Any], entry: CorpusFile, source: str, row: int, split: str | None,
             known: frozenset[str]) -> ParallelPair | None:
    where = f"{source}:{row}"
    columns = [entry.standard, entry.dialect_text] + ([entry.dialect] if entry.dialect else [])
    missing = [c for c in columns if c not in record]
    if missing:
        raise DataError(f"{where}: missing column(s) {', '.join(map(repr, missing))}; found: "
                        f"{', '.join(map(str, record)) or '(none)'} (set the column names in the corpus file)")
    standard, dialect_text = _text(record[entry.standard]), _text(record[entry.dialect_text])
    dialect_raw = entry.dialect_value if entry.dialect_value is not None else _text(record[entry.dialect or ""])
    if not match_key(standard) or not match_key(dialect_text):
        return None
    dialect = dialect_raw.strip().lower().replace(" ", "_")
    if dialect not in known:
        raise DataError(f"{where}: {unknown_variant_message(dialect_raw, known).replace('experiment', 'corpus')}")
    return ParallelPair(id=pair_id(standard, dialect_text, dialect), standard=standard, dialect_text=dialect_text,
                        dialect=dialect, source=source, split=split, row=row, standard_norm=match_key(standard),
                        dialect_norm=match_key(dialect_text))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN from pandas-written files
        return ""
    return str(value)
