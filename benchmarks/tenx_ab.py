"""Two versions of dialectbias side by side on the studies `tenx.py --keep DIR` kept (issue 23 item 4).

`tenx.py` builds each scale's study from nothing (~75 min for 1× and 10×). To see what a change to a read path
did, this runs the read-only steps again (`report`, `export`: `tenx.py --child STEP`) on the kept stores,
once with this checkout's code and once with a git revision's (`--base`, checked out in a temporary worktree
and put first on PYTHONPATH), alternately, each step in a fresh subprocess. `--cold` empties the operating
system's page cache before each run (needs root: /proc/sys/vm/drop_caches), so neither version reads what
the other left in memory. It prints each figure for both versions, new / base, and each version's growth
from the first scale to the last, and writes benchmarks/results/tenx_ab.json.

`resume` (`run_experiment` again with everything done) writes: when the two versions' stores differ (a schema
migration) or their request sets' fingerprints do (the schema and dialectbias versions are part of them), the
base cannot run after the new code and the new code's first run compiles every request again. So for
`resume` each scale runs the base `--rounds` times, then this checkout once (`upgrade`: the migration and
the rebuild a user sees once), then this checkout `--rounds` times; the figures compared are each version's
best round. Run it on stores the base built (`tenx.py --keep` from a checkout of the base).

Usage:
  nice python benchmarks/tenx.py --keep /tmp/tenx                   # build and keep x1/ and x10/
  nice python benchmarks/tenx_ab.py --keep /tmp/tenx --base 4317ce3 --steps export --cold
  nice python benchmarks/tenx_ab.py --keep /tmp/tenx-base --base f79830c --steps resume --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from operator import itemgetter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from tenx import DROP_CACHES, child_result, drop_page_cache  # noqa: E402


def git(*args: str) -> str:
    """`git -C REPO ARGS…`'s output (it must succeed)."""
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def run_step(step: str, study: Path, src: Path, cold: bool) -> dict[str, Any]:
    if cold:
        drop_page_cache()
    env = {**os.environ, "PYTHONPATH": str(src)}
    result = child_result([sys.executable, str(HERE / "tenx.py"), "--child", step, str(study / "tenx.yaml"),
                           "--sample", "0"], f"{study}: step {step} with {src}", env)
    return {k: result[k] for k in ("wall_s", "cpu_s", "peak_rss_mb")}


def resume_rounds(study: Path, base_src: Path, cold: bool, rounds: int) -> dict[str, Any]:
    """The base's resumes, this checkout's first (the upgrade), then its resumes; each version's best round
    (least CPU) as `base` and `new`, every round kept."""
    base = [run_step("resume", study, base_src, cold) for _ in range(rounds)]
    upgrade = run_step("resume", study, REPO / "src", cold)
    new = [run_step("resume", study, REPO / "src", cold) for _ in range(rounds)]
    print(f"{study.name} resume: base rounds {base}, upgrade {upgrade}, new rounds {new}", flush=True)
    least_cpu = itemgetter("cpu_s")
    return {"base": min(base, key=least_cpu), "new": min(new, key=least_cpu), "upgrade": upgrade,
            "base_rounds": base, "new_rounds": new}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="the folder `tenx.py --keep` built")
    parser.add_argument("--base", required=True, help="the git revision to compare this checkout with")
    parser.add_argument("--steps", nargs="+", default=["export"], choices=["report", "export", "resume"])
    parser.add_argument("--rounds", type=int, default=1, help="resume: runs of each version (the best is kept)")
    parser.add_argument("--cold", action="store_true", help="empty the OS page cache before each run")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tenx_ab.json")
    args = parser.parse_args()
    studies = sorted((p for p in args.keep.glob("x*") if (p / "tenx.yaml").exists()),
                     key=lambda p: float(p.name[1:]))
    if not studies:
        raise SystemExit(f"{args.keep}: no x<scale>/tenx.yaml (build them with `tenx.py --keep {args.keep}`)")
    if args.cold and not os.access(DROP_CACHES, os.W_OK):
        raise SystemExit(f"--cold: {DROP_CACHES} is not writable (run as root, or leave --cold out)")
    base_rev, head = git("rev-parse", args.base), git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "src"))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tenx-ab-") as tmp:
        tree = Path(tmp) / "base"
        git("worktree", "add", "--detach", str(tree), base_rev)
        try:
            for study in studies:
                for step in args.steps:
                    key = f"{study.name} {step}"
                    if step == "resume":
                        results[key] = resume_rounds(study, tree / "src", args.cold, args.rounds)
                    else:
                        results[key] = {"base": run_step(step, study, tree / "src", args.cold),
                                        "new": run_step(step, study, REPO / "src", args.cold)}
                    print(f"{key:<16} " + "  ".join(f"{k} {v}" for k, v in results[key].items()
                                                    if k in ("base", "new")), flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                           capture_output=True, check=False)
    lines = [f"{'':16}{'figure':>13}{'base':>10}{'new':>10}{'new/base':>10}"]
    for key, both in results.items():
        for figure in ("wall_s", "cpu_s", "peak_rss_mb"):
            b, n = both["base"][figure], both["new"][figure]
            lines.append(f"{key:16}{figure:>13}{b:>10,.1f}{n:>10,.1f}{n / b if b else 0:>10.2f}")
    growth: dict[str, Any] = {}
    first, last = studies[0].name, studies[-1].name
    if first != last:
        for step in args.steps:
            for figure in ("wall_s", "cpu_s"):
                for version in ("base", "new"):
                    a, b = results[f"{first} {step}"][version][figure], results[f"{last} {step}"][version][figure]
                    growth[f"{step} {figure} {version}"] = round(b / a, 2) if a else None
        lines.append(f"growth {last} / {first}: " + ", ".join(f"{k} {v}" for k, v in growth.items()))
    print("\n".join(lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"base": base_rev, "new": head, "new_src_uncommitted_changes": dirty, "cold": args.cold,
               "steps": results, "growth": growth, "cpus": os.cpu_count(), "load_average_at_end": os.getloadavg(),
               "when": time.strftime("%Y-%m-%d")}
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
