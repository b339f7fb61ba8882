"""Which rubric review reads a judgment with: its judge's, as the experiment's task declares it (judge id ->
rubric, `ReviewConfig.rubrics`). There is no default: a judge the task declares no rubric for is an error
naming it, never a silent fallback to another rubric's fields and ranges."""

from __future__ import annotations

from collections.abc import Mapping

from dialectbias.errors import ConfigError
from dialectbias.judges import Rubric, load_rubric, packaged_rubrics


def judge_rubric(rubrics: Mapping[str, Rubric], judge_id: str) -> Rubric:
    """The rubric the task declares for `judge_id`; ConfigError naming the judge when it declares none."""
    try:
        return rubrics[judge_id]
    except KeyError:
        declared = ", ".join(f"{j} ({r.name})" for j, r in sorted(rubrics.items())) or "none"
        raise ConfigError(f"judge {judge_id!r}: the experiment's task declares no rubric for it (rubrics: "
                          f"{declared}), so its judgments cannot be reviewed; is it still one of the "
                          "experiment's judges?") from None


def rubric_named(rubrics: Mapping[str, Rubric], name: str) -> Rubric | None:
    """The rubric a stored record names (an override's or a judgment's `rubric`): one the task declares,
    else the packaged rubric of that name; None when neither exists (the record's values are then read
    without ranges)."""
    found = next((r for r in rubrics.values() if r.name == name), None)
    if found is None and name in packaged_rubrics():
        found = load_rubric(name)
    return found
