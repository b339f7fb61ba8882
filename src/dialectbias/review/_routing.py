"""Where the primary judge's miscalibrated dialects go (`review.on_miscalibrated`), and the alert lines that
say so (SPEC §4 P3: human fallback and multi-judge validation; Bengali paper §3.3–3.4).

A dialect is miscalibrated for a judge when its latest calibration snapshot (`dialectbias review calibration`)
falls below a threshold of the experiment *as it is now* (`review.min_ccc`, `min_cbs`, `min_kappa`, over at
least `calibration_min_pairs` human-scored judgments). With `on_miscalibrated: <judge id>`, that judge's
scores replace the primary's in a dialect only when its own calibration there passes the same check: a
fallback judge that is miscalibrated itself, or was never checked there (no snapshot row, or too few
human-scored judgments), is not used, and the dialect goes to human review as with `on_miscalibrated:
review` (the primary's judgments of it enter the judgments queue; its scores stay until a human replaces
them). Every alert names the judge it is about and the judge whose scores are used.
"""

from __future__ import annotations

from dataclasses import dataclass

from dialectbias.review._calibration import ALL, CalibrationRow, Thresholds, below_thresholds
from dialectbias.store import Store, latest_snapshot

ROUTE_WARN, ROUTE_REVIEW = "warn", "review"


@dataclass(frozen=True)
class Verdict:
    """A judge's calibration in one dialect by its latest snapshot, against the current thresholds."""

    n: int
    below: tuple[str, ...] = ()
    unchecked: str = ""  # why it was not checked ("" = checked)

    @property
    def passes(self) -> bool:
        return not self.below and not self.unchecked


@dataclass(frozen=True)
class Route:
    """A dialect the primary judge is miscalibrated in: `judge` is the judge whose scores replace the
    primary's there, None when the dialect goes to review instead (`why`: the fallback judge not used)."""

    dialect: str
    judge: str | None
    why: str = ""


def verdicts(store: Store, judge: str, thresholds: Thresholds) -> dict[str, Verdict]:
    """dialect -> the judge's verdict by its latest snapshot (dialects absent: never calibrated there)."""
    out = {}
    for r in latest_snapshot(store, judge):
        dialect, n, ccc, cbs, kappa = r.dialect, r.n, r.ccc, r.cbs, r.kappa
        if dialect == ALL:
            continue
        if n < thresholds.min_pairs:
            out[dialect] = Verdict(n, unchecked=f"only {n} human-scored judgment(s), fewer than "
                                                f"review.calibration_min_pairs {thresholds.min_pairs}")
        elif ccc is None and cbs is None and kappa is None:
            out[dialect] = Verdict(n, unchecked="no CCC, CBS or kappa could be computed")
        else:
            out[dialect] = Verdict(n, tuple(below_thresholds(ccc, cbs, kappa, thresholds)))
    return out


def _fallback_problem(judge: str, dialect: str, verdict: Verdict | None) -> str:
    if verdict is None:
        return f"judge {judge} has no calibration for {dialect} (no human-scored judgment in its latest snapshot)"
    if verdict.unchecked:
        return f"judge {judge}'s calibration for {dialect} is unchecked: {verdict.unchecked}"
    return f"judge {judge} is itself below the thresholds for {dialect}: {', '.join(verdict.below)}"


def miscalibrated_routes(store: Store, primary: str | None, route: str, thresholds: Thresholds) -> dict[str, Route]:
    """dialect -> where the primary judge's scores go in each dialect it is miscalibrated in (none with
    `on_miscalibrated: warn`); see the module docstring."""
    if primary is None or route == ROUTE_WARN:
        return {}
    mine = verdicts(store, primary, thresholds)
    bad = sorted(d for d, v in mine.items() if v.below)
    if route == ROUTE_REVIEW:
        return {d: Route(d, None) for d in bad}
    fallback = verdicts(store, route, thresholds)
    out = {}
    for d in bad:
        v = fallback.get(d)
        out[d] = Route(d, route) if v is not None and v.passes else Route(d, None, _fallback_problem(route, d, v))
    return out


def calibration_alert(row: CalibrationRow, primary: str | None, route: str, routes: dict[str, Route]) -> str:
    """The alert of a judge below the thresholds in a dialect: what happens to that dialect's scores, naming
    the judge whose scores are used (never the miscalibrated judge itself)."""
    head = f"judge {row.judge} is below the thresholds for {row.dialect} ({', '.join(row.below)}; n={row.n})"
    if row.judge == primary:
        r = routes.get(row.dialect)
        if route == ROUTE_WARN:
            return f"{head}; its scores stay in the tables (review.on_miscalibrated: warn)"
        if r is None:
            return (f"{head}; not routed yet: review.on_miscalibrated ({route}) acts on the latest calibration "
                    "snapshot (`dialectbias review calibration` stores one)")
        if r.judge is not None:
            return f"{head}; judge {r.judge}'s scores replace {row.judge}'s for {row.dialect} (review.on_miscalibrated)"
        if r.why:
            return (f"{head}; review.on_miscalibrated names judge {route}, but {r.why}: its scores are not used, "
                    f"{row.judge}'s {row.dialect} judgments go to review instead")
        return f"{head}; its {row.dialect} judgments go to review (review.on_miscalibrated: review)"
    if row.judge == route:
        return (f"{head}; as review.on_miscalibrated's fallback judge it does not replace {primary}'s scores for "
                f"{row.dialect}")
    return head

