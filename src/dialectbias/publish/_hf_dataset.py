"""`dialectbias export EXP --hf-dataset DIR`: the experiment as a Hugging Face dataset folder.

Layout (the Hub's documented multi-config Parquet layout, declared in the card's `configs:`):

    DIR/README.md                                   the dataset card (`_card.py`)
    DIR/data/<config>/test-00000-of-00001.parquet   one config per table, one `test` split each
    DIR/images/<sha256 prefix><suffix>              the items' local image files (tasks with images)

Configs: `items` (the default: what `export --items` writes, one row per item), `variants` (one row per item
and variant with its provenance, `_variants.py`), and, once the experiment has a store, what `export --format
parquet` writes: `generations`, `judgments`, `reasks`, `annotations`, the task's own tables
(`Task.export_tables`) and `departures`. The store's tables are written by the same functions as that command,
so their values are equal; a table with no row is left out (the card lists it). The items' nested fields
(variants, translation, validation …) are JSON text, as the store export's JSON columns are.

Nothing secret or local leaves the machine: API keys are never in the store (providers read them from the
environment, `api_key_env`), images are copied in and referenced relatively, a local model path is shown by its
folder name, and every text cell and the card are checked for the experiment's folder, the store's path, the
home folder and the value of each model's `api_key_env`: a hit is an error naming config, column and row."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.data import is_url
from dialectbias.errors import ConfigError, DataError
from dialectbias.publish._card import CardFacts, render_card
from dialectbias.publish._variants import VARIANT_COLUMNS, variant_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from dialectbias.config import Experiment
    from dialectbias.store import Store
    from dialectbias.tasks import Task

#: the card's `license:` when --license is not given (a Hub identifier: "the licence is not known yet")
DEFAULT_LICENSE = "unknown"
SPLIT = "test"
#: the marker in a card this command wrote: `--force` replaces only such a folder
MARKER = "<!-- written by `dialectbias export --hf-dataset` -->"
#: configs the toolkit itself names; a task table of the same name is written as `task_<name>`
OWN_CONFIGS = ("items", "variants")


@dataclass
class HFDatasetResult:
    """What `--hf-dataset` wrote: rows per config, the configs left out (no row), images copied."""

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    images: int = 0
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{n:>8} {name} → {data_file(name)}" for name, n in self.rows.items()]
        if self.empty:
            out.append(f"{'':>8} no row, left out: {', '.join(self.empty)}")
        if self.images:
            out.append(f"{self.images:>8} image files → images/")
        return [*out, f"dataset card → {self.out / 'README.md'}"]


def data_file(config: str) -> str:
    """The config's Parquet file, relative to the dataset folder (the card's `data_files` path)."""
    return f"data/{config}/{SPLIT}-00000-of-00001.parquet"


def check_target(out: Path, force: bool) -> None:
    """Refuse a folder that exists and is not empty, unless `force` and a previous `--hf-dataset` wrote it."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--hf-dataset {out}: is a file, not a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return
    card = out / "README.md"
    ours = card.is_file() and MARKER in card.read_text(encoding="utf-8", errors="replace")
    if not force:
        raise ConfigError(f"--hf-dataset {out}: the folder exists and is not empty; give a new or empty folder"
                          + (", or --force to replace this earlier export" if ours else ""))
    if not ours:
        raise ConfigError(f"--hf-dataset {out}: --force replaces only a folder an earlier `export --hf-dataset` "
                          "wrote (its README.md carries the marker); this one holds other files: give a new folder")


def write_hf_dataset(exp: Experiment, task: Task, store: Store | None, out: Path, *, license: str | None = None,
                     force: bool = False) -> HFDatasetResult:
    """Write the dataset folder `out` (see the module docstring); `store`: the experiment's store, None before
    a run (the items as the experiment reads them). Written into a temporary sibling folder, renamed at the
    end: an error leaves `out` as it was."""
    from dialectbias.publish._licenses import check_license

    check_target(out, force)
    result = HFDatasetResult(out)
    lic = check_license(license or DEFAULT_LICENSE)
    if license is None:
        result.warnings.append(f"no --license given: the card says `license: {DEFAULT_LICENSE}`; set the licence of "
                               "the items and answers you publish (e.g. --license cc-by-4.0) before uploading")
    out.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        tables = _write_tables(exp, task, store, build, result)
        facts = CardFacts.gather(exp, task, tables, result, lic)
        (build / "README.md").write_text(render_card(facts, MARKER), encoding="utf-8")
        _check_leaks(exp, build)
        if out.exists():
            shutil.rmtree(out)
        build.replace(out)
    finally:
        if build.exists():
            shutil.rmtree(build)
    return result


def _write_tables(exp: Experiment, task: Task, store: Store | None, build: Path,
                  result: HFDatasetResult) -> dict[str, pa.Table]:
    """Every config's Parquet file; returns the tables the card describes (items, variants, generations,
    judgments) read back."""
    import pyarrow.parquet as pq

    raw = build / "_raw"
    raw.mkdir()
    items = _export_items(exp, task, store, raw)
    items = _copy_images(task, items, raw, build, result)
    _put(build, "items", _items_table(items), result)
    _put(build, "variants", _variants_table(items, exp), result)
    if store is not None:
        for name, path in _store_tables(exp, task, store, raw).items():
            config = f"task_{name}" if name in OWN_CONFIGS else name
            n = pq.ParquetFile(path).metadata.num_rows
            if n == 0:
                result.empty.append(config)
                continue
            target = build / data_file(config)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
            result.rows[config] = n
    shutil.rmtree(raw)
    return {name: pq.read_table(build / data_file(name)) for name in ("items", "variants", "generations", "judgments")
            if name in result.rows}


def _put(build: Path, config: str, table: pa.Table, result: HFDatasetResult) -> None:
    import pyarrow.parquet as pq

    if table.num_rows == 0:
        result.empty.append(config)
        return
    target = build / data_file(config)
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, target)
    result.rows[config] = table.num_rows


def _export_items(exp: Experiment, task: Task, store: Store | None, raw: Path) -> list[dict[str, Any]]:
    """The rows `export --items` writes (`Task.export_items`). With image fields, the file is written in the
    data folder for a moment (relative image paths must stay below the file's folder), then removed."""
    from dialectbias.tasks._items_file import data_folder

    folder = data_folder(exp) if task.image_fields else None
    where = folder if folder is not None and folder.is_dir() and os.access(folder, os.W_OK) else raw
    path = where / f".dialectbias-hf-items-{os.getpid()}.jsonl"
    try:
        task.export_items(store, path)
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    finally:
        path.unlink(missing_ok=True)
    for row in rows:  # a local model's path (a translator served from a folder) by its folder name
        for made in (row.get("translation") or {}).values():
            if isinstance(made, dict) and isinstance(made.get("model"), str) and Path(made["model"]).is_absolute():
                made["model"] = Path(made["model"]).name
    for row in rows:
        row["_items_dir"] = str(where)
    return rows


def _copy_images(task: Task, rows: list[dict[str, Any]], raw: Path, build: Path,
                 result: HFDatasetResult) -> list[dict[str, Any]]:
    """Copy each local image an item names into `images/` (named by content) and point the field at it; a URL
    stays as it is."""
    copied: dict[Path, str] = {}
    for row in rows:
        base = Path(row.pop("_items_dir"))
        for name in task.image_fields:
            ref = row.get(name)
            if not isinstance(ref, str) or not ref or is_url(ref):
                continue
            src = (base / ref).resolve()
            if src not in copied:
                if not src.is_file():
                    raise DataError(f"item {row.get('id')!r}: {name} {ref!r}: no such file ({src})")
                digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
                rel = f"images/{digest}{src.suffix.lower()}"
                (build / "images").mkdir(exist_ok=True)
                if not (build / rel).exists():
                    shutil.copyfile(src, build / rel)
                    result.images += 1
                copied[src] = rel
            row[name] = copied[src]
    return rows


def _items_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The items as a table: columns in order of first appearance; a field holding an object or a list (or
    values of mixed types) as JSON text; a missing field null."""
    import pyarrow as pa

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays = {}
    for col in columns:
        values = [row.get(col) for row in rows]
        arrays[col] = _column(values, pa)
    return pa.table(arrays) if arrays else pa.table({"id": pa.array([], pa.string())})


def _column(values: list[Any], pa: Any) -> Any:
    as_json = pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values], pa.string())
    if any(isinstance(v, dict | list) for v in values):
        return as_json
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return as_json
    return array.cast(pa.string()) if pa.types.is_null(array.type) else array


def _variants_table(rows: list[dict[str, Any]], exp: Experiment) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([pa.field(c, pa.bool_() if c == "is_human_validated" else pa.string())
                        for c in VARIANT_COLUMNS])
    return pa.Table.from_pylist(variant_rows(rows, exp.dialects), schema=schema)


def _store_tables(exp: Experiment, task: Task, store: Store, raw: Path) -> dict[str, Path]:
    """What `dialectbias export EXP --format parquet --out DIR` writes, by the same functions."""
    from dialectbias.report import departure_table
    from dialectbias.store._export import export_store, write_rows

    counts = export_store(store, raw, "parquet")
    for name, rows in task.export_tables(store).items():
        counts[name] = write_rows(rows, raw / f"{name}.parquet", "parquet")
    if exp.departures:
        counts["departures"] = write_rows(departure_table(exp), raw / "departures.parquet", "parquet")
    return {name: raw / f"{name}.parquet" for name in counts}


def _secrets(exp: Experiment) -> list[tuple[str, str]]:
    """(what, text) pairs that must not appear in the folder."""
    found = [("the experiment's folder", str(exp.base_dir.resolve())), ("the store's path", str(exp.store_path))]
    home = str(Path.home())
    if len(home) > 1:
        found.append(("the home folder", home + os.sep))
    for m in exp.all_models():
        env = getattr(m, "api_key_env", None)
        value = os.environ.get(env) if env else None
        if value and len(value) >= 8:
            found.append((f"the API key of {m.id!r} (${env})", value))
    return found


def _check_leaks(exp: Experiment, build: Path) -> None:
    """DataError when a text cell or the card holds a local path or a key (`_secrets`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    secrets = _secrets(exp)
    card = (build / "README.md").read_text(encoding="utf-8")
    for what, text in secrets:
        if text in card:
            raise DataError(f"the dataset card would contain {what}; nothing was written")
    for path in sorted((build / "data").rglob("*.parquet")):
        table = pq.read_table(path)
        for col in table.column_names:
            column = table[col]
            if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
                continue
            for what, text in secrets:
                hits = pc.match_substring(column, text)
                if pc.any(hits).as_py():
                    row = hits.to_pylist().index(True)
                    raise DataError(f"config {path.parent.name!r}, column {col!r}, row {row}: contains {what}; "
                                    "nothing was written (publish items whose paths are relative, or edit them)")


def publish_hf_dataset(experiment: str | Path, out: Path, *, license: str | None = None,
                       force: bool = False) -> HFDatasetResult:
    """`dialectbias export EXP --hf-dataset OUT`: open the experiment (its store when a run or an import stored
    its items; else the items as the experiment reads them, with a warning) and write the folder."""
    from dialectbias.api import open_experiment
    from dialectbias.store import Store, has_items

    exp, task = open_experiment(experiment)
    if exp.store_path.is_file():
        with Store.open(exp.store_path, create=False) as store:
            if has_items(store):
                return write_hf_dataset(exp, task, store, out, license=license, force=force)
    result = write_hf_dataset(exp, task, None, out, license=license, force=force)
    result.warnings[:0] = [*task.input_warnings(), f"{exp.store_path.name}: no run or import yet: the dataset holds "
                           "the items only (run the experiment first to publish its answers and judgments)"]
    return result
