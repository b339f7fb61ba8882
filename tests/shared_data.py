"""../shared/data: the released datasets some tests read, which the repository does not ship.

The folder is looked for next to the checkout and next to every parent folder of it (so a git worktree
finds the main checkout's). A test asks for what it reads with `shared_path(...)`, which skips it with one
message naming the missing path; module-level checks use `find_shared(...)` (None when absent) with
`missing(...)` as the reason. Imported by name (tests/ is on sys.path, like tiny_llm)."""

from __future__ import annotations

from pathlib import Path

import pytest

#: the ../shared/data folder, or None
ROOT: Path | None = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
                          if (p / "shared" / "data").is_dir()), None)
#: the datasets' folders under it
VASHANTOR = ("vashantor", "Vashantor_Simplified")
GERMAN = ("german_dialect_bias",)
BANGLAVERSE = ("banglaverse", "data")


def find_shared(*parts: str) -> Path | None:
    """`../shared/data/<parts>` when it exists, else None."""
    path = ROOT.joinpath(*parts) if ROOT is not None else None
    return path if path is not None and path.exists() else None


def missing(*parts: str, why: str = "") -> str:
    """The skip message: ``shared data not available (../shared/data/<parts>): <why>``."""
    return f"shared data not available (../shared/data/{'/'.join(parts)})" + (f": {why}" if why else "")


def shared_path(*parts: str, why: str = "") -> Path:
    """`../shared/data/<parts>`; skips the calling test (`missing`'s message) when it is absent."""
    path = find_shared(*parts)
    if path is None:
        pytest.skip(missing(*parts, why=why))
    return path
