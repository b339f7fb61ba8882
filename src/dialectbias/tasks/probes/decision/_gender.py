"""The gender of the persona names in the decision profiles, standard against dialect writers (German paper App.
E: for Llama-3.1 8B, 54.7% male vs 46.3% female names for standard-German input, 16.1% female for dialect input).

Per model × setting × writer (standard or dialect): how many profiles, how many with a name, and the names per
gender-guesser class (`_names`). The female share is female / (female + male) over the names with a binary
gender; with `gender_mostly: binary` (default) mostly_female counts as female and mostly_male as male, with
`separate` they are left out of the share like andy and unknown, which are always counted apart and left out.

The test of the difference, per model × setting: Fisher's exact test on the 2 × 2 table (standard, dialect) ×
(female, male), two-sided (`scipy.stats.fisher_exact`). Exact rather than chi-square or a two-proportion z-test
because the counts per model can be small (a few dozen profiles, some cells near 0), where the normal
approximation misleads; the table also gives the odds ratio and the difference in shares.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import pandas as pd
from scipy import stats

from dialectbias.metrics import ALPHA_COMPARE
from dialectbias.report import Section
from dialectbias.tasks.probes.decision._names import GENDERS, NO_NAME, guesser_available, name_gender, persona_name
from dialectbias.tasks.probes.decision._profiles import split_profiles

WRITERS = ("standard", "dialect")
NAME_COLUMNS = ["request_id", "model", "setting", "condition", "dialect", "writer", "name", "gender"]
COUNT_COLUMNS = ["model", "setting", "condition", "writer", "n_profiles", "n_named", *GENDERS, NO_NAME, "n_binary",
                 "n_female", "n_male", "female_share", "male_share"]
TEST_COLUMNS = ["model", "setting", "condition", "n_binary_standard", "female_share_standard", "n_binary_dialect",
                "female_share_dialect", "diff", "odds_ratio", "p", "significant"]

LEGEND = {
    "model": "the model that wrote the profiles",
    "setting": "naming or usage",
    "condition": "dialect: the second writer shows dialect (text or label); noisy: the noised standard text (the "
                 "control of §6.2), kept apart",
    "writer": "standard: profiles of the standard writer; dialect: of the dialect writer",
    "n_profiles": "profiles split from the answers (answers whose two profiles could not be split are left out "
                  "and counted in the text above)",
    "n_named": "profiles in which a persona name was found (rule in docs/probes.md)",
    **{g: f"names gender-guesser classes as {g}" for g in GENDERS},
    NO_NAME: "profiles without a name",
    "n_binary": "names with a binary gender (the share's denominator): male + female, with mostly_* when "
                "gender_mostly is binary",
    "n_female, n_male": "of which female / male",
    "female_share, male_share": "n_female / n_binary, n_male / n_binary",
}
TEST_LEGEND = {
    "model": LEGEND["model"], "setting": LEGEND["setting"], "condition": LEGEND["condition"],
    "n_binary_standard, n_binary_dialect": "names with a binary gender in each writer's profiles",
    "female_share_standard, female_share_dialect": "female share of each writer's names",
    "diff": "female_share_dialect − female_share_standard",
    "odds_ratio": "sample odds ratio (female:male, standard ÷ dialect) of the 2 × 2 table",
    "p": "Fisher's exact test on (standard, dialect) × (female, male), two-sided",
    "significant": f"p < {ALPHA_COMPARE}",
}


def persona_rows(generations: Iterable[tuple[str, str]], meta: pd.DataFrame, *, country: str | None
                 ) -> tuple[pd.DataFrame, int]:
    """One row per profile: its persona name and gender (NO_NAME when none), and how many answers had no two
    profiles. `generations`: (request id, answer text); `meta`: indexed by request id with model, setting,
    condition, dialect and dialect_writer."""
    rows, unsplit = [], 0
    by_id = meta.to_dict("index")
    for request_id, text in generations:
        m = by_id.get(request_id)
        if m is None:
            continue
        profiles = split_profiles(text)
        if profiles is None:
            unsplit += 1
            continue
        dialect_writer = m["dialect_writer"]
        for writer, letter in (("dialect", dialect_writer), ("standard", "B" if dialect_writer == "A" else "A")):
            name = persona_name(profiles[letter])
            rows.append({"request_id": request_id, "model": m["model"], "setting": m["setting"],
                         "condition": m["condition"], "dialect": m["dialect"], "writer": writer, "name": name,
                         "gender": name_gender(name, country) if name else NO_NAME})
    return pd.DataFrame(rows, columns=NAME_COLUMNS), unsplit


def _binary(counts: dict[str, int], mostly: str) -> tuple[int, int]:
    female, male = counts["female"], counts["male"]
    if mostly == "binary":
        female, male = female + counts["mostly_female"], male + counts["mostly_male"]
    return female, male


def gender_counts(names: pd.DataFrame, mostly: Literal["binary", "separate"]) -> pd.DataFrame:
    """Per model × setting × condition × writer: profiles, named profiles, each gender class, and the binary
    shares."""
    out = []
    for (model, setting, condition, writer), g in names.groupby(["model", "setting", "condition", "writer"],
                                                                sort=True, dropna=False):
        counts = {k: int((g.gender == k).sum()) for k in (*GENDERS, NO_NAME)}
        female, male = _binary(counts, mostly)
        n = female + male
        out.append({"model": model, "setting": setting, "condition": condition, "writer": writer,
                    "n_profiles": len(g),
                    "n_named": len(g) - counts[NO_NAME], **counts, "n_binary": n, "n_female": female, "n_male": male,
                    "female_share": female / n if n else math.nan, "male_share": male / n if n else math.nan})
    return pd.DataFrame(out, columns=COUNT_COLUMNS)


def gender_test(counts: pd.DataFrame) -> pd.DataFrame:
    """Per model × setting × condition with both writers named: Fisher's exact test, standard vs dialect (or
    noisy) female shares."""
    out = []
    for (model, setting, condition), g in counts.groupby(["model", "setting", "condition"], sort=True, dropna=False):
        side = {r.writer: r for r in g.itertuples()}
        if not all(w in side and side[w].n_binary for w in WRITERS):
            continue
        s, d = side["standard"], side["dialect"]
        odds, p = stats.fisher_exact([[s.n_female, s.n_male], [d.n_female, d.n_male]], alternative="two-sided")
        out.append({"model": model, "setting": setting, "condition": condition, "n_binary_standard": s.n_binary,
                    "female_share_standard": s.female_share, "n_binary_dialect": d.n_binary,
                    "female_share_dialect": d.female_share, "diff": d.female_share - s.female_share,
                    "odds_ratio": float(odds), "p": float(p), "significant": bool(p < ALPHA_COMPARE)})
    return pd.DataFrame(out, columns=TEST_COLUMNS)


def gender_sections(generations: Iterable[tuple[str, str]], meta: pd.DataFrame, out_dir: Path, *,
                    country: str | None, mostly: Literal["binary", "separate"]) -> list[Section]:
    """decision_persona_names.csv (every profile's name and gender), decision_persona_gender.csv (counts and
    shares per model × setting × writer) and decision_persona_gender_test.csv (Fisher's exact test)."""
    heading = "Gender of the persona names (German paper App. E)"
    if not guesser_available():
        return [Section(heading=heading, text="Not computed: gender-guesser is not installed "
                                              "(pip install 'dialectbias[names]').")]
    names, unsplit = persona_rows(generations, meta, country=country)
    names.to_csv(out_dir / "decision_persona_names.csv", index=False)
    counts = gender_counts(names, mostly)
    counts.to_csv(out_dir / "decision_persona_gender.csv", index=False)
    test = gender_test(counts)
    test.to_csv(out_dir / "decision_persona_gender_test.csv", index=False)
    rule = ("mostly_female / mostly_male count as female / male" if mostly == "binary" else
            "mostly_* are left out of the shares")
    text = (f"First names of the personas in each writer's profile (rule: docs/probes.md), classified by "
            f"gender-guesser ({country or 'all countries'}); {rule}; andy, unknown and profiles without a name are "
            f"counted, not in the shares. {unsplit} answer(s) had no two profiles to split and are left out. "
            f"Every name is in decision_persona_names.csv.")
    return [Section(heading=heading, table=counts, legend=LEGEND, text=text, empty="no profiles"),
            Section(heading="Female share: standard against dialect writers (Fisher's exact test)", table=test,
                    legend=TEST_LEGEND, empty="no model × setting with binary-gender names for both writers")]


__all__ = ["gender_counts", "gender_sections", "gender_test", "persona_rows"]
