"""The writer-prefix robustness check of both probes (German paper App. B.1, Table 7): bias per prefix and each
prefix against the default one, as a report section and a CSV."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dialectbias.report import Section
from dialectbias.tasks.probes._probe import DEFAULT_PREFIX
from dialectbias.tasks.probes._report import STAT_LEGEND, comparison_legend, comparison_table, stats_table

PREFIX_LEGEND = {"prefix": "the writer prefix (App. B.1): default ('Given the two writers: …'), consider "
                           "('Consider the following two writers: …') or imagine ('Imagine two writers: …')"}


def prefix_tables(scored: pd.DataFrame, *, n_resamples: int, seed: int, value: str = "bias", student: bool = False
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(bias per model × setting × prefix over all traits, each other prefix against `default` per model ×
    setting × trait). `scored` needs the columns of `stats_table` and `prefix`; the prompts under each prefix
    share their options and writer order, so the rows differ by the prefix only."""
    table = stats_table(scored, ["model", "setting", "prefix"], n_resamples=n_resamples, seed=seed, value=value)
    others = sorted(p for p in set(scored.prefix.dropna()) if p != DEFAULT_PREFIX)
    frames = []
    for other in others:
        part = comparison_table(scored, ["model", "setting", "trait"], "prefix", other, DEFAULT_PREFIX,
                                n_resamples=n_resamples, seed=seed, value=value, label_a="prefix",
                                label_b="default", student=student)
        part.insert(3, "prefix", other)
        frames.append(part)
    columns = ["model", "setting", "trait", "prefix", "n_prefix", "bias_prefix", "n_default", "bias_default",
               "diff", "ci_low", "ci_high", "t", "p", "significant", "cohens_d"]
    compare = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return table, compare


def prefix_sections(scored: pd.DataFrame, out_dir: Path, task: str, *, n_resamples: int, seed: int,
                    value: str = "bias", student: bool = False) -> list[Section]:
    """`<task>_bias_by_prefix.csv` and `<task>_prefix_vs_default.csv` with their report sections; nothing when
    the run used a single prefix."""
    if "prefix" not in scored.columns or scored.prefix.nunique() < 2:
        return []
    table, compare = prefix_tables(scored, n_resamples=n_resamples, seed=seed, value=value, student=student)
    table.to_csv(out_dir / f"{task}_bias_by_prefix.csv", index=False)
    compare.to_csv(out_dir / f"{task}_prefix_vs_default.csv", index=False)
    legend = {**{k: v for k, v in STAT_LEGEND.items() if k in table.columns or "," in k}, **PREFIX_LEGEND}
    return [
        Section(heading="Bias per writer prefix (German paper App. B.1)", table=table, legend=legend,
                text="Every prompt was sent under each prefix with the same adjectives or options and the same "
                     "writer order, so the rows differ by the prefix only."),
        Section(heading="Each prefix against the default prefix, per trait", table=compare,
                legend={"model": STAT_LEGEND["model"], "setting": STAT_LEGEND["setting"],
                        "trait": STAT_LEGEND["trait"], **PREFIX_LEGEND,
                        **comparison_legend("prefix", "default", "answers under this prefix / the default")},
                empty="no trait has scored answers under both prefixes"),
    ]


__all__ = ["PREFIX_LEGEND", "prefix_sections", "prefix_tables"]
