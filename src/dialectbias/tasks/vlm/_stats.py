"""Statistics of the BanglaVerse tasks (BanglaVerse §5, App. E.2, G; SPEC §4 P5), on plain DataFrames.

- accuracy per model × variant × strategy × domain, with an `all` domain row (percent, unrounded);
- Wald 95% CI `p ± 1.96·sqrt(p(1−p)/n)` (App. G.2, `metrics.wald_ci`; not clipped to [0, 1], as written);
- Table 3: each variant's value and its delta vs standard Bengali per model, plus the dialect mean;
- App. G.1: paired t-test over (model × domain) conditions of standard vs the mean of the dialects;
- Table 4: domain difficulty `f(d) = (100 − best VQA accuracy % over strategies) + (100 − 100 × caption
  judge score)`, each averaged over models and variants, ranked from easy to hard;
- RQ4: strategies compared per model and per variant;
- judge agreement (Pearson, Spearman) per variant; language-constraint violations per model × variant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dialectbias.data import STANDARD
from dialectbias.dialects import language_of
from dialectbias.metrics import paired_test, pearson, spearman, wald_ci

ALL = "all"
DIALECT_MEAN = "dialect_mean"
KEYS = ["model", "variant", "strategy", "domain"]


def accuracy_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """`model, variant, strategy, domain, n, accuracy` (percent) over answered requests (failed ones are not
    in n; unparseable answers and items whose answer is not among the options are, and are wrong); one
    extra row per model × variant × strategy with domain `all`."""
    cols = [*KEYS, "n", "accuracy"]
    df = pd.DataFrame([r for r in rows if r["status"] == "ok"], columns=[*KEYS, "correct", "status"])
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["correct"] = df["correct"].astype(float)
    per_domain = df.groupby(KEYS, sort=True)["correct"].agg(["size", "mean"]).reset_index()
    overall = df.groupby(KEYS[:3], sort=True)["correct"].agg(["size", "mean"]).reset_index()
    overall["domain"] = ALL
    out = pd.concat([per_domain, overall[per_domain.columns]], ignore_index=True)
    out = out.rename(columns={"size": "n", "mean": "accuracy"})
    out["accuracy"] = out["accuracy"] * 100.0
    out["n"] = out["n"].astype(int)
    return out.sort_values(KEYS, key=lambda s: s.map(lambda v: (v == ALL, v)) if s.name == "domain" else s,
                           ignore_index=True)[cols]


def with_wald(table: pd.DataFrame, value: str = "accuracy") -> pd.DataFrame:
    """The table with `ci_low`, `ci_high` (percent) of the Wald 95% CI of `value` (percent) over `n`."""
    out = table.copy()
    cis = [wald_ci(v / 100.0, int(n)) for v, n in zip(out[value], out["n"], strict=True)]
    out["ci_low"] = [lo * 100.0 for lo, _ in cis]
    out["ci_high"] = [hi * 100.0 for _, hi in cis]
    return out


def is_dialect(variant: str, extra: dict[str, list[str]] | None = None) -> bool:
    """A Bengali dialect (not `standard`, not another language)."""
    return variant != STANDARD and language_of(variant, extra) == "bn"


def deltas(table: pd.DataFrame, value: str, extra: dict[str, list[str]] | None = None,
           by: Sequence[str] = ("model", "strategy")) -> pd.DataFrame:
    """Table 3: per `by` group, each variant's `value`, the mean over the dialects (`dialect_mean`), and
    `delta` = value − standard's (nan when the group has no standard value)."""
    cols = [*by, "variant", value, "delta"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    parts = []
    for key, group in table.groupby(list(by), sort=True):
        g = group[["variant", value]].copy()
        dialects = g[g["variant"].map(lambda v: is_dialect(v, extra))]
        if len(dialects):
            g = pd.concat([g, pd.DataFrame({"variant": [DIALECT_MEAN], value: [dialects[value].mean()]})],
                          ignore_index=True)
        std = g.loc[g["variant"] == STANDARD, value]
        base = float(std.iloc[0]) if len(std) else math.nan
        g["delta"] = g[value] - base
        for name, k in zip(by, key if isinstance(key, tuple) else (key,), strict=True):
            g[name] = k
        parts.append(g)
    return pd.concat(parts, ignore_index=True)[cols]


def paired_standard_vs_dialects(table: pd.DataFrame, value: str, extra: dict[str, list[str]] | None = None,
                                min_conditions: int = 2) -> pd.DataFrame:
    """App. G.1, per strategy: over the (model × domain) conditions that have a standard value and at least
    one dialect value, the paired t-test of standard vs the dialects' mean. Columns: strategy, conditions,
    standard_mean, dialect_mean, mean_diff (standard − dialects), t, p; t and p empty below
    `min_conditions`."""
    cols = ["strategy", "conditions", "standard_mean", "dialect_mean", "mean_diff", "t", "p"]
    if table.empty:
        return pd.DataFrame(columns=cols)
    domains = table[table["domain"] != ALL]
    out = []
    for strategy, group in domains.groupby("strategy", sort=True):
        std, dia = [], []
        for _, cond in group.groupby(["model", "domain"], sort=True):
            s = cond.loc[cond["variant"] == STANDARD, value]
            d = cond.loc[cond["variant"].map(lambda v: is_dialect(v, extra)), value]
            if len(s) and len(d):
                std.append(float(s.iloc[0]))
                dia.append(float(d.mean()))
        if not std:
            continue
        test = paired_test(std, dia) if len(std) >= min_conditions else None
        out.append({"strategy": strategy, "conditions": len(std), "standard_mean": float(np.mean(std)),
                    "dialect_mean": float(np.mean(dia)), "mean_diff": float(np.mean(std) - np.mean(dia)),
                    "t": test.t_statistic if test else math.nan, "p": test.t_pvalue if test else math.nan})
    return pd.DataFrame(out, columns=cols)


STRATEGY_ORDER = ("zero_shot", "few_shot", "cot")


def _strategy_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Strategy columns in the paper's order (zero-shot, few-shot, CoT), any other after them."""
    order = [c for c in STRATEGY_ORDER if c in frame.columns] + [c for c in frame.columns if c not in STRATEGY_ORDER]
    return frame[order]


def domain_means(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """domain × strategy: the mean of `value` over models and variants (BanglaVerse Table 4's columns)."""
    domains = table[table["domain"] != ALL]
    if domains.empty:
        return pd.DataFrame()
    return _strategy_columns(domains.pivot_table(index="domain", columns="strategy", values=value, aggfunc="mean"))


def domain_difficulty(vqa: pd.DataFrame | None, caption: pd.Series | None) -> pd.DataFrame:
    """Table 4: per domain, the VQA accuracy of each strategy (`vqa`: domain × strategy, percent), the
    caption judge score (`caption`: domain → 0–1), `f(d) = (100 − best VQA %) + (100 − 100 × caption)`,
    and its rank (1 = easiest). With only one of the two, `f(d)` is the available term and `partial` says so."""
    frame = vqa.copy() if vqa is not None and not vqa.empty else pd.DataFrame()
    frame.columns = [f"vqa_{c}" for c in frame.columns]
    if caption is not None and len(caption):
        frame = frame.join(caption.rename("caption").to_frame(), how="outer") if len(frame) else \
            caption.rename("caption").to_frame()
    if frame.empty:
        return pd.DataFrame(columns=["rank", "domain", "f_d", "partial"])
    vqa_cols = [c for c in frame.columns if c.startswith("vqa_")]
    best = frame[vqa_cols].max(axis=1) if vqa_cols else pd.Series(np.nan, index=frame.index)
    frame["best_vqa"] = best
    terms = pd.DataFrame({"vqa": 100.0 - best,
                          "caption": 100.0 - 100.0 * frame["caption"] if "caption" in frame else np.nan})
    frame["f_d"] = terms.sum(axis=1, min_count=1)
    frame["partial"] = terms.isna().any(axis=1)
    frame = frame.reset_index().rename(columns={"index": "domain"}).sort_values(["f_d", "domain"],
                                                                                 ignore_index=True)
    frame.insert(0, "rank", range(1, len(frame) + 1))
    return frame


def strategy_comparison(table: pd.DataFrame, value: str, by: str) -> pd.DataFrame:
    """RQ4: `by` (model or variant) × strategy, the mean of the `all`-domain `value` over the other key."""
    overall = table[table["domain"] == ALL]
    if overall.empty:
        return pd.DataFrame()
    return _strategy_columns(overall.pivot_table(index=by, columns="strategy", values=value, aggfunc="mean"))


def judge_correlations(rows: Sequence[dict[str, Any]], judges: Sequence[str]) -> pd.DataFrame:
    """Per variant (and `all`) and judge pair: captions both scored, Pearson r and Spearman ρ of their
    scores (App. F), and both means."""
    cols = ["variant", "judge_a", "judge_b", "n", "pearson", "spearman", "mean_a", "mean_b"]
    out = []
    for a_i, a in enumerate(judges):
        for b in judges[a_i + 1:]:
            pairs = [(r["variant"], r[f"judge:{a}"], r[f"judge:{b}"]) for r in rows
                     if r.get(f"judge:{a}") is not None and r.get(f"judge:{b}") is not None]
            for variant in [*sorted({p[0] for p in pairs}), ALL]:
                sel = [(x, y) for v, x, y in pairs if variant in (ALL, v)]
                x = np.array([s[0] for s in sel], dtype=float)
                y = np.array([s[1] for s in sel], dtype=float)
                out.append({"variant": variant, "judge_a": a, "judge_b": b, "n": len(sel),
                            "pearson": pearson(x, y) if len(sel) else math.nan,
                            "spearman": spearman(x, y) if len(sel) else math.nan,
                            "mean_a": float(x.mean()) if len(sel) else math.nan,
                            "mean_b": float(y.mean()) if len(sel) else math.nan})
    return pd.DataFrame(out, columns=cols)


def violation_table(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Language-constraint violations per model × variant: answers checked (with letters), violations, rate."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        c = counts.setdefault((r["model"], r["variant"]), [0, 0, 0])
        c[0] += 1
        if r["violation"] is not None:
            c[1] += 1
            c[2] += bool(r["violation"])
    out = [{"model": m, "variant": v, "answers": a, "checked": k, "violations": n, "rate": n / k if k else math.nan}
           for (m, v), (a, k, n) in sorted(counts.items())]
    return pd.DataFrame(out, columns=["model", "variant", "answers", "checked", "violations", "rate"])


def mean_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """`model, variant, strategy, domain, n` (answered) and the mean of each column (its own count in
    `<column>_n`), per domain and over `all` domains."""
    ok = [r for r in rows if r["status"] == "ok"]
    df = pd.DataFrame(ok, columns=[*KEYS, *columns])
    if df.empty:
        return pd.DataFrame(columns=[*KEYS, "n", *[x for c in columns for x in (c, f"{c}_n")]])
    for c in columns:
        df[c] = pd.to_numeric(df[c], errors="coerce")
    parts = []
    for keys, level in ((KEYS, None), (KEYS[:3], ALL)):
        g = df.groupby(keys, sort=True)
        part = g.size().rename("n").to_frame()
        for c in columns:
            part[c] = g[c].mean()
            part[f"{c}_n"] = g[c].count()
        part = part.reset_index()
        if level is not None:
            part["domain"] = level
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    return out[[*KEYS, "n", *[x for c in columns for x in (c, f"{c}_n")]]].sort_values(
        KEYS, key=lambda s: s.map(lambda v: (v == ALL, v)) if s.name == "domain" else s, ignore_index=True)
