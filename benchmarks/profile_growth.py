"""Which functions grow faster than the study: two cProfile statistics of one step at two scales, side by side
(issue 23).

`tenx.py --profile DIR` writes each step's statistics as DIR/STEP-xSCALE.prof. For a step at scales a and b,
this prints each function's own CPU time at both scales (cProfile's tottime: time in SQLite's C code is
counted to the sqlite3 method that ran it, or to the generator that stepped its cursor) and how many seconds
it is above linear at b: its time at b minus its time at a × b/a. These add up to the step's excess, so the
first lines say where it is.

Usage:
  nice python benchmarks/tenx.py --scales 1 3 --profile /tmp/prof --out /tmp/prof/tenx.json
  python benchmarks/profile_growth.py /tmp/prof/compile-judge-x1.prof /tmp/prof/compile-judge-x3.prof 1 3
"""

from __future__ import annotations

import argparse
import pstats
import re
from pathlib import Path


def own_times(path: Path) -> dict[str, float]:
    """Each function's own CPU seconds (tottime), named file:line(function)."""
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    return {_name(file, line, name): own for (file, line, name), (_, _, own, _, _) in stats.items()}


def _name(file: str, line: int, name: str) -> str:
    """file:line(function), or a C method's Class.method (`sqlite3.Connection.executemany`)."""
    method = re.fullmatch(r"<method '(\w+)' of '([\w.]+)' objects>", name)
    if method:
        return f"{method[2]}.{method[1]}"
    builtin = re.fullmatch(r"<built-in method ([\w.]+)>", name)
    return builtin[1] if builtin else f"{Path(file).name}:{line}({name})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("scale_a", type=float)
    parser.add_argument("scale_b", type=float)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    a, b = own_times(args.first), own_times(args.second)
    ratio = args.scale_b / args.scale_a
    total_a, total_b = sum(a.values()), sum(b.values())
    print(f"own CPU s: {total_a:.1f} → {total_b:.1f}; growth per unit of scale {total_b / total_a / ratio:.3f} "
          f"({total_b - total_a * ratio:+.1f} s above linear)")
    rows = sorted(((b.get(f, 0.0) - a.get(f, 0.0) * ratio, f) for f in a.keys() | b.keys()), reverse=True)
    print(f"{'above linear':>12} {'at a':>8} {'at b':>8}  function")
    for excess, name in rows[:args.top]:
        print(f"{excess:+11.2f}s {a.get(name, 0.0):7.2f}s {b.get(name, 0.0):7.2f}s  {name[:47]}")


if __name__ == "__main__":
    main()
