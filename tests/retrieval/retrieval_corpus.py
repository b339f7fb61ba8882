"""A small hand-written Bengali parallel corpus in two dialects, written as CSV files and a corpus file."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

SYLHET = [
    ("আজকে আমার মন ভালো নেই", "আইজকু আমার মন ভালা নায়"),
    ("তুমি কোথায় যাচ্ছ?", "তুমি কই যাইরায়?"),
    ("আমি ভাত খাই", "আমি ভাত খাই"),
    ("গরুর দুধ খুব উপকারী", "গরুর দুধ বহুত উপকারী"),
    ("আমরা কাল বাড়িতে যাব", "আমরা কালকু বাড়িত যাইমু"),
    ("তোমার বয়স কত?", "তোমার বয়স কত?"),
    ("বৃষ্টি হলে রাস্তা ডুবে যায়", "ঝড়-বাদল অইলে রাস্তা ডুবি যায়"),
    ("সে আমাকে ১০ টাকা দিয়েছে", "হে আমারে ১০ টেকা দিছে"),
]
CHITTAGONG = [
    ("আজকে আমার মন ভালো নেই", "আজিয়া আঁর মন ভালা নাই"),
    ("তুমি কোথায় যাচ্ছ?", "তুই হডে যার?"),
    ("আমি ভাত খাই", "আঁই ভাত হাই"),
    ("আমরা কাল বাড়িতে যাব", "আঁরা কাইল্লা বাড়িত যাইয়ুম"),
]


def write_pairs(path: Path, rows: list[tuple[str, str]], dialect: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["standard_text", "dialect_text", "dialect"])
        w.writerows([(s, d, dialect) for s, d in rows])
    return path


def write_corpus(folder: Path, name: str = "tiny") -> Path:
    write_pairs(folder / "data" / "Sylhet Train.csv", SYLHET, "Sylhet")
    write_pairs(folder / "data" / "Chittagong Train.csv", CHITTAGONG, "Chittagong")
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "files": [
        {"path": "data/*.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]},
        allow_unicode=True), encoding="utf-8")
    return path


