"""`dialectbias build vocabulary`: the most frequent words of a corpus, for the noisy-text control (SPEC §4 P1).

German ships with a list (the Leipzig news words in ../shared/data/german_dialect_bias); for Bengali or any
other language, build one from text you have, e.g. the standard side of the Vashantor CSVs. Words are
counted with `dialectbias.text.tokenize`, which keeps Bengali vowel signs inside their word (a `\\w` regex
splits `খাই` into `খ`, `ই`), and keeps a hyphenated word whole ("E-Mail", as the noise treats it).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from dialectbias.errors import DataError
from dialectbias.text import count_words

#: columns read from a CSV/JSONL corpus when none is named: the standard-language side
DEFAULT_COLUMNS = ("standard_text", "standard", "variants.standard", "text")


def _get(row: dict[str, object], column: str) -> object:
    value: object = row
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return row.get(column)
        value = value[part]
    return value


def _pick(path: Path, found: Sequence[str], columns: Sequence[str]) -> list[str]:
    if columns:
        missing = [c for c in columns if c not in found and c.split(".")[0] not in found]
        if missing:
            raise DataError(f"{path}: no column {', '.join(map(repr, missing))}; columns: {', '.join(found)}")
        return list(columns)
    for c in DEFAULT_COLUMNS:
        if c in found or (c == "variants.standard" and "variants" in found):
            return [c]
    raise DataError(f"{path}: name the text column(s) with --column (none of {', '.join(DEFAULT_COLUMNS)} found); "
                    f"columns: {', '.join(found)}")


def corpus_texts(path: Path, columns: Sequence[str] = ()) -> Iterator[str]:
    """Texts of one corpus file: .txt (each line), .csv or .jsonl (the named columns, default the standard
    side: standard_text, standard, variants.standard or text)."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise DataError(f"{path}: corpus file not found")
    cols: list[str] | None = None
    try:
        if suffix == ".txt":
            yield from (line for line in path.read_text(encoding="utf-8-sig").splitlines() if line.strip())
        elif suffix == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as fh:
                reader = csv.DictReader(fh)
                cols = _pick(path, reader.fieldnames or [], columns)
                for row in reader:
                    yield from (str(row[c]) for c in cols if row.get(c))
        elif suffix == ".jsonl":
            for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{n}: not JSON: {exc.msg}") from exc
                if not isinstance(row, dict):
                    raise DataError(f"{path}:{n}: expected a JSON object")
                cols = cols or _pick(path, list(row), columns)
                yield from (v for c in cols if isinstance(v := _get(row, c), str) and v)
        else:
            raise DataError(f"{path}: unsupported corpus format {suffix!r}; use .txt, .csv or .jsonl")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text: {exc}") from exc


def build_vocabulary(
    files: Sequence[Path], columns: Sequence[str] = (), top: int = 5000, min_count: int = 1, lowercase: bool = False,
) -> tuple[list[tuple[str, int]], int]:
    """The `top` most frequent words (count ≥ `min_count`) over `files`, ties broken alphabetically, and
    the number of word tokens counted."""
    if not files:
        raise DataError("build vocabulary: no corpus file given")
    counts: Counter[str] = Counter()
    for f in files:
        counts.update(count_words(corpus_texts(f, columns), lowercase=lowercase))
    if not counts:
        raise DataError(f"{', '.join(map(str, files))}: no word found")
    ranked = sorted(((w, c) for w, c in counts.items() if c >= min_count), key=lambda wc: (-wc[1], wc[0]))
    return ranked[:top], sum(counts.values())


def write_vocabulary(out: Path, words: Sequence[tuple[str, int]], note: str) -> None:
    """One `word<TAB>count` line per word, most frequent first, after a `# note` line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# {note}\n" + "".join(f"{w}\t{c}\n" for w, c in words), encoding="utf-8")


__all__ = ["DEFAULT_COLUMNS", "build_vocabulary", "corpus_texts", "write_vocabulary"]
