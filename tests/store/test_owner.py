"""Issue 19.4: who may use a store (`store/_owner.py`): its own file whatever its name, a renamed file with
the same name, nobody else."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from dialectbias.errors import StoreError
from dialectbias.store import Store, check_owner, claim_store, open_read_only


@pytest.fixture
def owned(tmp_path: Path) -> Path:
    """tmp/runs/shared.sqlite owned by experiment 'a' of tmp/a.yaml."""
    (tmp_path / "a.yaml").write_text("name: a\n", encoding="utf-8")
    store_path = tmp_path / "runs" / "shared.sqlite"
    with Store.open(store_path) as store:
        claim_store(store, "a", tmp_path / "a.yaml")
        assert store.get_meta("owner_file") == "../a.yaml"
    return store_path


def test_the_owning_file_may_use_it_under_another_name(owned: Path, tmp_path: Path) -> None:
    check_owner(owned, "renamed", tmp_path / "a.yaml")


def test_another_file_is_refused_and_take_over_hands_the_store_over(owned: Path, tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text("name: b\n", encoding="utf-8")
    with pytest.raises(StoreError, match=r"holds experiment 'a' \(.*a\.yaml\), not 'b' \(.*b\.yaml\)"):
        check_owner(owned, "b", tmp_path / "b.yaml")
    with Store.open(owned) as store, pytest.raises(StoreError, match="--take-over"):
        claim_store(store, "b", tmp_path / "b.yaml")
    with Store.open(owned) as store:
        claim_store(store, "b", tmp_path / "b.yaml", take_over=True)
    check_owner(owned, "b", tmp_path / "b.yaml")
    with pytest.raises(StoreError, match=r"holds experiment 'b'"):
        check_owner(owned, "a", tmp_path / "a.yaml")


def test_a_gone_owner_file_passes_the_store_to_a_file_of_the_same_name_only(owned: Path, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").rename(tmp_path / "final.yaml")
    check_owner(owned, "a", tmp_path / "final.yaml")
    with pytest.raises(StoreError, match=r"holds experiment 'a'"):
        check_owner(owned, "other", tmp_path / "final.yaml")


def test_a_store_without_owner_or_experiment_is_anyones(tmp_path: Path) -> None:
    with Store.open(tmp_path / "new.sqlite"):
        pass
    check_owner(tmp_path / "new.sqlite", "x", tmp_path / "x.yaml")
    check_owner(tmp_path / "missing.sqlite", "x", tmp_path / "x.yaml")


def _open_files(folder: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc/self/fd (Linux) to list this process's open files")
    found = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile (the listing's own)
        if target.startswith(str(folder.resolve())):
            found.append(target)
    return found


def test_reading_the_owner_and_copying_leave_no_connection_open(owned: Path, tmp_path: Path) -> None:
    """`with sqlite3.connect(...)` commits but does not close. The owner check every command makes and the copy
    `plan` compiles into each left a connection open (a file descriptor, a hold that keeps the store from
    leaving WAL mode) until Python's cyclic collector happened to run."""
    gc.disable()
    try:
        for _ in range(3):
            check_owner(owned, "a", tmp_path / "a.yaml")
        Store.open_copy(owned, tmp_path / "runs" / "copy.sqlite").close()
        assert _open_files(owned.parent) == []
    finally:
        gc.enable()


def test_a_store_refused_on_open_leaves_no_connection_open(tmp_path: Path) -> None:
    """A store that cannot be opened (here: a newer schema) is refused with its connection closed."""
    path = tmp_path / "runs" / "new.sqlite"
    with Store.open(path) as store:
        store.set_meta("schema_version", "999")
    gc.disable()
    try:
        with pytest.raises(StoreError, match="newer than this dialectbias"):
            Store.open(path)
        with pytest.raises(StoreError, match="newer than this dialectbias"):
            open_read_only(path)
        assert _open_files(path.parent) == []
    finally:
        gc.enable()
