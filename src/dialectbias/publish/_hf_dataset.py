"""`dialectbias export EXP --hf-dataset DIR`: the experiment as a Hugging Face dataset folder.

Layout (the Hub's documented multi-config Parquet layout, declared in the card's `configs:`):

    DIR/README.md                                   the dataset card (`_card.py`)
    DIR/data/<config>/test-00000-of-00001.parquet   one config per table, one `test` split each

Configs: `items` (the default: what `export --items` writes, one row per item), `variants` (one row per item
and variant with its provenance, `_variants.py`), and, once the experiment has a store, what `export --format
parquet` writes: `generations`, `judgments`, `reasks`, `annotations`, the task's own tables
(`Task.export_tables`) and `departures`. The store's tables are written by the same functions as that command,
so their values are equal; a table with no row is left out (the card lists it). The items' nested fields
(variants, translation, validation …) are JSON text, as the store export's JSON columns are; the items' image
files are embedded in the `items` Parquet as the Hub's `Image` feature (the file's bytes and name).

Nothing secret or local leaves the machine: API keys are never in the store (providers read them from the
environment, `api_key_env`), images are embedded (their file name kept, not their path), a local model path is
shown by its folder name, a text cell naming a file in the experiment's or the data's folder is written relative
to it (`_local.relativize`), and every text cell and the card are checked for the experiment's folder, the store's
path, the home folder and the value of each model's `api_key_env`: a hit is an error naming config, column and row."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dialectbias.data import is_url
from dialectbias.errors import ConfigError
from dialectbias.publish._card import CardFacts, render_card
from dialectbias.publish._local import check_leaks, local_roots, relativize
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
    #: text cells that named a file in the experiment's or the data's folder, now relative to it
    relativized: int = 0
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{n:>8} {name} → {data_file(name)}" for name, n in self.rows.items()]
        if self.empty:
            out.append(f"{'':>8} no row, left out: {', '.join(self.empty)}")
        if self.images:
            out.append(f"{self.images:>8} image files embedded in the items (Image feature)")
        if self.relativized:
            out.append(f"{self.relativized:>8} text cells named a local file: written relative to its folder")
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
    umask = os.umask(0o022)
    os.umask(umask)
    build.chmod(0o777 & ~umask)  # mkdtemp's 0700 would outlive the rename
    try:
        tables = _write_tables(exp, task, store, build, result)
        result.relativized = relativize(build, local_roots(exp))
        facts = CardFacts.gather(exp, task, tables, result, lic)
        (build / "README.md").write_text(render_card(facts, MARKER), encoding="utf-8")
        check_leaks(exp, build)
        if out.exists():
            shutil.rmtree(out)
        build.replace(out)
    finally:
        if build.exists():
            shutil.rmtree(build)
    return result


def _write_tables(exp: Experiment, task: Task, store: Store | None, build: Path,
                  result: HFDatasetResult) -> dict[str, pa.Table]:
    """Every config's Parquet file; returns what the card describes, read back (`variants`, and the
    `generations`' model column)."""
    import pyarrow.parquet as pq

    raw = build / "_raw"
    raw.mkdir()
    items = _export_items(task, store, raw)
    _put(build, "items", _items_table(items, _image_columns(task, items, raw, result)), result)
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
    # what the card counts: the variants, and of the generations only who answered (a large run's prompts stay on disk)
    wanted = {"variants": None, "generations": ["model"]}
    return {name: pq.read_table(build / data_file(name), columns=columns) for name, columns in wanted.items()
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


def _export_items(task: Task, store: Store | None, raw: Path) -> list[dict[str, Any]]:
    """The rows `export --items` writes (`Task.export_items`); an image path that would lead out of the file's
    folder is written absolute (`_image_columns` embeds the file)."""
    from dialectbias.tasks._items_file import ABSOLUTE_OUTSIDE

    path = raw / "items.jsonl"
    token = ABSOLUTE_OUTSIDE.set(True)
    try:
        task.export_items(store, path)
    finally:
        ABSOLUTE_OUTSIDE.reset(token)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:  # a local model's path (a translator served from a folder) by its folder name
        for made in (row.get("translation") or {}).values():
            if isinstance(made, dict) and isinstance(made.get("model"), str) and Path(made["model"]).is_absolute():
                made["model"] = Path(made["model"]).name
    return rows


def _image_columns(task: Task, rows: list[dict[str, Any]], raw: Path, result: HFDatasetResult) -> dict[str, Any]:
    """The items' local images as the Hub's `Image` feature ({bytes, path}: the file's bytes and its name), per
    image field; a field that names a URL anywhere stays text. An image file that does not exist is null and
    counted in a warning."""
    import pyarrow as pa

    out = {}
    for name in task.image_fields:
        refs = [row.get(name) for row in rows]
        if not any(isinstance(r, str) and r for r in refs) or any(isinstance(r, str) and is_url(r) for r in refs):
            continue
        values: list[dict[str, Any] | None] = []
        missing: list[str] = []
        read: dict[Path, bytes] = {}
        for row, ref in zip(rows, refs, strict=True):
            src = (raw / ref).resolve() if isinstance(ref, str) and ref else None
            if src is not None and not src.is_file():
                missing.append(str(row.get("id")))
                src = None
            if src is None:
                values.append(None)
                continue
            if src not in read:
                read[src] = src.read_bytes()
                result.images += 1
            values.append({"bytes": read[src], "path": src.name})
        if missing:
            more = " …" if len(missing) > 5 else ""
            result.warnings.append(f"{len(missing)} item(s) name an {name} file that does not exist (their {name} "
                                   f"is null in the dataset): {', '.join(missing[:5])}{more}")
        out[name] = pa.array(values, pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    return out


def _items_table(rows: list[dict[str, Any]], images: dict[str, Any]) -> pa.Table:
    """The items as a table: columns in order of first appearance; a field holding an object or a list (or
    values of mixed types) as JSON text; a missing field null; image fields as the Hub's `Image` feature
    (declared in the schema's `huggingface` metadata, as `datasets` writes it)."""
    import pyarrow as pa

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays = {col: images[col] if col in images else _column([row.get(col) for row in rows], pa) for col in columns}
    table = pa.table(arrays) if arrays else pa.table({"id": pa.array([], pa.string())})
    dtypes = {pa.string(): "string", pa.int64(): "int64", pa.float64(): "float64", pa.bool_(): "bool"}
    features = {f.name: {"_type": "Image"} if f.name in images else {"dtype": dtypes[f.type], "_type": "Value"}
                for f in table.schema}
    return table.replace_schema_metadata({"huggingface": json.dumps({"info": {"features": features}})})


def _column(values: list[Any], pa: Any) -> Any:
    as_json = pa.array([None if v is None else json.dumps(v, ensure_ascii=False) for v in values], pa.string())
    if any(isinstance(v, dict | list) for v in values):
        return as_json
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
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
