"""One store, one experiment: the store remembers the experiment file that runs in it.

A store's current rows are one experiment's (each run replaces them with what its file asks for now), so a
second experiment file with the same `store:` (or a copy of the file keeping its `name:`, hence its default
store) would mark the first one's rows superseded and empty its report. Every command opening an experiment
checks that the store is the file's own; `run` and `import-generations` record the owner (in the `meta`
table: the experiment's name and its file relative to the store's folder, so moving the project folder
keeps it), or hand the store over with `--take-over`.

The same file is the same experiment whatever its `name:` says; a file that no longer exists whose name the
new file carries was renamed or moved. A store written before owners were recorded belongs to the experiment
that last ran in it (the `experiments` table), by name."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from dialectbias.errors import StoreError
from dialectbias.store._store import Store

OWNER_NAME_KEY = "owner_experiment"
OWNER_FILE_KEY = "owner_file"


@dataclass(frozen=True)
class StoreOwner:
    name: str
    file: Path | None  # None: not recorded (a store written before owners were)


def _owner(conn: sqlite3.Connection, store_path: Path) -> StoreOwner | None:
    """The owner recorded in the store at `store_path` (read through `conn`), else the experiment that
    last ran in it, else None (a new store)."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" in tables:
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (OWNER_NAME_KEY, OWNER_FILE_KEY))
                    .fetchall())
        if OWNER_NAME_KEY in meta:
            file = meta.get(OWNER_FILE_KEY)
            return StoreOwner(meta[OWNER_NAME_KEY], (store_path.parent / file).resolve() if file else None)
    if "experiments" in tables:
        row = conn.execute("SELECT name FROM experiments ORDER BY updated_at DESC LIMIT 1").fetchone()
        if row is not None:
            return StoreOwner(row[0], None)
    return None


def _refusal(store_path: Path, owner: StoreOwner | None, name: str, file: Path) -> str | None:
    """Why the experiment `name` of `file` may not use the store (None: it may)."""
    if owner is None or owner.file == file:
        return None
    if owner.file is None and owner.name == name:
        return None
    if owner.file is not None and owner.name == name and not owner.file.exists():
        return None  # the file was renamed or moved
    held = f"{owner.file}" if owner.file is not None else "file not recorded"
    return (f"{store_path}: this store holds experiment {owner.name!r} ({held}), not {name!r} ({file}); two "
            "experiments in one store replace each other's current rows.\n"
            f"  give {file.name} a `store:` of its own, or, if it replaces {owner.name!r} here, run "
            f"`dialectbias run {file.name} --take-over` (then {owner.name!r} is refused here until it takes the "
            "store back the same way)")


def _read_owner(store_path: Path) -> StoreOwner | None:
    """The owner of the store at `store_path`, read only; None when it has none or cannot be read."""
    try:
        with closing(sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)) as conn:  # (`with` alone: not closed)
            return _owner(conn, store_path)
    except sqlite3.DatabaseError:
        return None


def earlier_stores(store_path: Path, file: Path) -> list[tuple[Path, str]]:
    """(store, experiment name) of the stores beside a store not created yet that `file` ran in under another
    `name:` (a default store follows the name): the run says where its earlier results are."""
    store_path, file = store_path.resolve(), file.resolve()
    if store_path.exists() or not store_path.parent.is_dir():
        return []
    found = []
    for other in sorted(store_path.parent.glob("*.sqlite")):
        owner = _read_owner(other)
        if owner is not None and owner.file == file:
            found.append((other, owner.name))
    return found


def check_owner(store_path: Path, name: str, file: Path) -> None:
    """StoreError when the store at `store_path` belongs to another experiment file; reads only (a missing or
    unreadable store is left to the command that opens it)."""
    store_path = store_path.resolve()
    if not store_path.is_file():
        return
    problem = _refusal(store_path, _read_owner(store_path), name, file.resolve())
    if problem:
        raise StoreError(problem)


def claim_store(store: Store, name: str, file: Path, *, take_over: bool = False) -> None:
    """Record experiment `name` of `file` as the store's owner (a writing command, holding the run lock);
    StoreError when another experiment owns it, unless `take_over`."""
    store_path = store.path.resolve()
    file = file.resolve()
    if not take_over:
        problem = _refusal(store_path, _owner(store._conn, store_path), name, file)
        if problem:
            raise StoreError(problem)
    try:
        relative = os.path.relpath(file, store_path.parent)
    except ValueError:  # another drive (Windows): no relative path
        relative = str(file)
    with store.transaction():
        store.set_meta(OWNER_NAME_KEY, name)
        store.set_meta(OWNER_FILE_KEY, relative)
