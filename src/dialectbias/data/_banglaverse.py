"""Read the BanglaVerse release layout (faiyazabdullah/BanglaVerse `dataset/`) as items.

    <root>/<domain>/annotations/<domain>_qa_pairs.json   [{image_id, question, options, answer}]
    <root>/<domain>/annotations/<domain>_captions.json   [{image_id | food_id | …, caption}]
    <root>/<domain>/annotations/<domain>_commonsense_reasoning.json   [{image_id, question, answer}]
    <root>/<domain>/images/<image id>.<jpg|jpeg|png|webp|gif>

Any key ending in `_id` names the image (the food captions use `food_id`; the released caption scorer
read only `image_id` and silently lost 140 of them). Each QA pair is one `vqa` item, each caption one
`caption` item, each commonsense question (a short free-text answer) one `csu` item, in the `standard`
variant (the release is Bengali only); an image with a second question (history, politics; 4 CSU images)
gets the id `<image id>#2`. The image path is relative to `<root>`, so the
usual safe resolution (`resolve_item_image`) applies; an item whose image file is absent is reported
with its id, never dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dialectbias.data._records import Item
from dialectbias.dialects import STANDARD
from dialectbias.errors import DataError

Kind = Literal["vqa", "caption", "csu"]
_SUFFIX = {"vqa": "_qa_pairs.json", "caption": "_captions.json", "csu": "_commonsense_reasoning.json"}
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif")


@dataclass
class BanglaVerseLoad:
    """What reading the layout found: items read, and those whose image file is absent (`<id>: <path>`)."""

    root: Path
    items: int = 0
    without_image: list[str] = field(default_factory=list)


def banglaverse_root(path: Path) -> Path | None:
    """The folder holding the domain folders when `path` is (or contains as `data/` or `dataset/`) the
    BanglaVerse layout; None otherwise."""
    for root in (path, path / "data", path / "dataset"):
        if root.is_dir() and any(root.glob("*/annotations/*.json")):
            return root
    return None


def items_dir(path: Path) -> Path:
    """The folder the relative paths of items read from `path` (an `image`) are relative to: the layout's
    root for a data folder (the folder itself when it holds no layout), the file's folder for a data file."""
    return (banglaverse_root(path) or path) if path.is_dir() else path.parent


def _image_id(row: dict[str, Any], where: str) -> str:
    keys = [k for k in row if k.endswith("_id") and isinstance(row[k], str | int) and str(row[k]).strip()]
    if not keys:
        raise DataError(f"{where}: no image id (a key ending in '_id', e.g. image_id or food_id); keys: "
                        f"{', '.join(map(str, row)) or '(none)'}")
    return str(row["image_id"] if "image_id" in keys else row[keys[0]]).strip()


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(f"{path}: expected a JSON list of objects")
    return data


def _row_variant(kind: Kind, row: dict[str, Any], where: str) -> dict[str, Any]:
    if kind == "caption":
        caption = row.get("caption")
        if not isinstance(caption, str) or not caption.strip():
            raise DataError(f"{where}: 'caption' is missing or empty")
        return {"caption": caption}
    if kind == "csu":
        bad = [k for k in ("question", "answer") if not isinstance(row.get(k), str) or not row[k].strip()]
        if bad:
            raise DataError(f"{where}: {', '.join(bad)} missing or empty (a commonsense item needs question, answer)")
        return {"question": row["question"], "answer": row["answer"]}
    missing = [k for k in ("question", "options", "answer") if k not in row]
    if missing:
        raise DataError(f"{where}: missing {', '.join(missing)} (a QA pair needs question, options, answer)")
    if not isinstance(row["options"], list):
        raise DataError(f"{where}: 'options' must be a list")
    return {"question": row["question"], "options": row["options"], "answer": row["answer"]}


def iter_banglaverse(root: Path, kind: Kind, load: BanglaVerseLoad) -> Iterator[Item]:
    """The `kind` items of every domain folder under `root`, in domain then file order."""
    for domain_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted((domain_dir / "annotations").glob(f"*{_SUFFIX[kind]}"))
        images = {p.stem: p for p in sorted((domain_dir / "images").glob("*"))
                  if p.suffix.lower() in IMAGE_SUFFIXES} if (domain_dir / "images").is_dir() else {}
        seen: dict[str, int] = {}
        for path in files:
            for i, row in enumerate(_read(path)):
                where = f"{path}: entry {i}"
                image_id = _image_id(row, where)
                seen[image_id] = seen.get(image_id, 0) + 1
                item_id = image_id if seen[image_id] == 1 else f"{image_id}#{seen[image_id]}"
                image = images.get(image_id)
                rel = (image.relative_to(root) if image else Path(domain_dir.name, "images", image_id)).as_posix()
                load.items += 1
                if image is None:
                    load.without_image.append(f"{item_id}: {rel}.*")
                yield Item(id=item_id, domain=domain_dir.name, variants={STANDARD: _row_variant(kind, row, where)},
                           metadata={"image": rel, "image_id": image_id, "image_present": image is not None,
                                     "source_file": path.relative_to(root).as_posix()})
