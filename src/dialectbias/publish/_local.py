"""Nothing local or secret leaves the machine in a published dataset (`export --hf-dataset`): text cells that
name a file in the experiment's or its data's folder are made relative to it, then every text cell and the card
are checked for the experiment's folder, the store's path, the home folder and each model's API key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from dialectbias.errors import DataError

if TYPE_CHECKING:
    from dialectbias.config import Experiment


def local_roots(exp: Experiment) -> list[str]:
    """The experiment's folder and its data's folder, longest first, each with a trailing separator."""
    from dialectbias.tasks._items_file import data_folder

    roots = {str(exp.base_dir.resolve()), str(exp.base_dir)}
    folder = data_folder(exp)
    if folder is not None:
        roots |= {str(folder.resolve()), str(folder)}
    return sorted((r.rstrip(os.sep) + os.sep for r in roots if len(r) > 1), key=len, reverse=True)


def relativize(build: Path, roots: list[str]) -> int:
    """Rewrite every text cell naming a file under one of `roots` (e.g. translation_quality's `where`,
    `/home/me/study/data.csv:12`) relative to that folder (`data.csv:12`); the number of cells changed."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    changed = 0
    for path in sorted((build / "data").rglob("*.parquet")):
        table = pq.read_table(path)
        before = changed
        for i, f in enumerate(table.schema):
            if not pa.types.is_string(f.type):
                continue
            column = table.column(i)
            hit = None
            for root in roots:
                found = pc.match_substring(column, root)
                hit = found if hit is None else pc.or_(hit, found)
                column = pc.replace_substring(column, root, "")
            n = pc.sum(hit).as_py() if hit is not None else 0
            if n:
                changed += n
                table = table.set_column(i, f, column)
        if changed != before:
            pq.write_table(table, path)
    return changed


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


def check_leaks(exp: Experiment, build: Path) -> None:
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
