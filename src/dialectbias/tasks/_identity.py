"""How a compiled request set's fingerprint knows the files its requests were built from (`Task.input_identity`).

A file is named where it sits relative to the experiment's folder (or, for the package's own templates, to the
installed package) and identified by the sha256 of its bytes. So a study moved or copied to another folder or
machine, a file touched, or the same version of dialectbias installed at another path reuses its compiled
requests, and a file whose content changed is always seen, even with its size and mtime kept (`cp -p`, `rsync
-t` and archive restores keep both). Before (issue 23), files were known by absolute path, size and mtime: a
moved study rebuilt every request (12–26 min of CPU at 10× the paper, benchmarks/tenx.py) and such an edit
was not seen at all.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from dialectbias.data import file_digest

#: the prefix of a name inside the installed package
PACKAGE_PREFIX = "dialectbias:"


@cache
def package_root() -> Path:
    return Path(str(resources.files("dialectbias")))


def input_name(path: Path, base_dir: Path) -> str:
    """`path` relative to `base_dir` when it was given relative to it (`../data/x.jsonl` stays so), relative to
    the installed package with `dialectbias:` in front, else absolute."""
    for root, prefix in ((package_root(), PACKAGE_PREFIX), (base_dir, "")):
        try:
            return prefix + path.relative_to(root).as_posix()
        except ValueError:
            continue
    return str(path)


def file_identity(path: Path, base_dir: Path) -> list[str]:
    """[name, sha256] of one input file (`input_name`, `dialectbias.data.file_digest`)."""
    return [input_name(path, base_dir), file_digest(path)]
