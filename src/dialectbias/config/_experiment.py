"""The experiment file: which task, which data, which models and judges."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dialectbias._yaml import load_yaml
from dialectbias.config._departures import (
    DepartureSetting,
    Replicate,
    declared_departures,
    departure_settings,
    paper_options,
)
from dialectbias.data._records import InputLimits
from dialectbias.errors import ConfigError, problem_line, read_text_file, validation_problems, yaml_line
from dialectbias.providers._config import ModelConfig
from dialectbias.providers._registry import config_class, provider_names

if TYPE_CHECKING:
    from dialectbias.judges import Rubric


class ReviewSettings(BaseModel):
    """When a judgment goes to the human review queue (SPEC §4 P3, Human fallback)."""

    model_config = ConfigDict(extra="forbid")

    confidence_threshold: int = Field(default=3, ge=0, le=5)
    calibration_per_level: int = Field(default=100, ge=0)
    overlap: int = Field(default=1, ge=1, description="annotators per review task in the review app (k ≥ 2: "
                         "overlap, so agreement between annotators can be measured)")
    min_ccc: float = Field(default=0.8, description="a judge whose Lin's CCC with the human scores falls below "
                           "this for a dialect is miscalibrated there (SPEC §4 P3 threshold)")
    min_cbs: float = Field(default=0.75, description="the same for Critical Bias Sensitivity")
    min_kappa: float = Field(default=0.6, description="the same for quadratic-weighted Cohen's kappa of the "
                             "rubric's Likert fields")
    calibration_min_pairs: int = Field(default=5, ge=3, description="human-scored judgments a judge needs in a "
                                       "dialect before it is checked against the thresholds")
    on_miscalibrated: str = Field(default="warn", description="what happens to a dialect where the primary "
                                  "judge is miscalibrated: warn (report only), review (all its judgments of "
                                  "that dialect go to the review queue), or a judge id (qa_bias: that judge's "
                                  "scores replace the primary's for the dialect in the final tables, when that "
                                  "judge's own latest calibration for the dialect passes; else the dialect goes "
                                  "to review as with `review`)")
    human_score: Literal["mean", "latest"] = Field(
        default="mean", description="the human score of a judgment several annotators scored (review.overlap "
        "≥ 2, or several CSV imports): mean (of each annotator's latest score) or latest (the last score stored, "
        "whoever gave it); used wherever a human score replaces a judge's or a judge is calibrated against it")


#: task settings an experiment file may give at the top level as well as under `options:` (the contracts of
#: SPEC §4 P5, vqa/caption, and of translation_quality)
TOP_LEVEL_OPTIONS = ("strategies", "vqa_parse", "systems", "metrics")


class RaySettings(BaseModel):
    """`ray:` — where `executor: ray` runs (SPEC §5). Per-model replica settings live in the model entries."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = Field(default=None, description="an existing Ray cluster to connect to (`auto`, "
                                "`ray://HOST:10001`); default: start a local Ray for the run")
    num_cpus: int | None = Field(default=None, ge=1, description="CPUs of the local Ray (without `address`)")
    num_gpus: int | None = Field(default=None, ge=0, description="GPUs of the local Ray (without `address`)")
    batch_size: int = Field(default=64, ge=1, le=100_000, description="requests per Ray task (HTTP models)")
    ship_code: bool = Field(default=True, description="with `address`: the run's Ray jobs carry dialectbias and "
                            "the packages its workers need (runtime_env py_modules), so the cluster needs only "
                            "Ray; false: every node has dialectbias installed")
    vllm_engine: Literal["actor", "ray_data"] = Field(
        default="actor", description="vllm models: `actor` keeps one engine per replica for the whole run "
        "(re-asks and later stages included); `ray_data` runs each send through Ray Data LLM's processor "
        "(a new engine per send; multi-node pipeline-parallel replicas)")


class Experiment(BaseModel):
    """One experiment file. Paths are resolved relative to the file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    task: str
    data: str | None = None
    variants: list[str] | None = None
    models: list[ModelConfig] = Field(default_factory=list, description="models under test; a task that scores "
                                      "imported generations (vqa, caption) or sends requests to role models only "
                                      "(translate) may list none")
    judges: list[ModelConfig] = Field(default_factory=list)
    roles: dict[str, ModelConfig] = Field(
        default_factory=dict, description="models a task needs for a role (e.g. extractor, translator): role -> "
        "a model config like those of `models` (its `id` defaults to the role name)")
    executor: str = Field(default="local", description="how requests are sent: local (asyncio, the default) or "
                          "ray (Ray Data LLM engine processors for vllm models, Ray tasks for HTTP models)")
    ray: RaySettings = Field(default_factory=RaySettings, description="executor: ray: cluster settings")
    store: str | None = None
    options: dict[str, Any] = Field(default_factory=dict, description="task-specific settings")
    review: ReviewSettings = Field(default_factory=ReviewSettings)
    limits: InputLimits = Field(default_factory=InputLimits,
                                description="item field sizes: warn above, refuse the item above (characters)")
    dialects: dict[str, list[str]] = Field(
        default_factory=dict, description="extra dialect/variant names per language, added to the registry")
    seed: int = 0
    replicate: Replicate = Field(
        default="toolkit", description="paper: every option where the toolkit departs from the paper's procedure "
        "takes the paper's value (docs/departures.md); toolkit: our defaults. The report lists which was used")
    note: str | None = Field(default=None, description="a caveat or description shown at the top of the report")

    _path: Path | None = PrivateAttr(default=None)
    _node: Any = PrivateAttr(default=None)
    _departures: list[DepartureSetting] = PrivateAttr(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _top_level_options(cls, data: Any) -> Any:
        """Task settings the vqa/caption contract allows at the top level (`strategies:`, `vqa_parse:`) are the
        same as under `options:`; giving one in both places is an error."""
        if not isinstance(data, dict) or not any(k in data for k in TOP_LEVEL_OPTIONS):
            return data
        options = data.get("options") or {}
        if not isinstance(options, dict):
            return data  # the options field reports its own type error
        moved = {k: data[k] for k in TOP_LEVEL_OPTIONS if k in data}
        twice = sorted(set(moved) & set(options))
        if twice:
            raise ValueError(f"{', '.join(twice)}: given both at the top level and under options:; keep one")
        return {**{k: v for k, v in data.items() if k not in moved}, "options": {**options, **moved}}

    @field_validator("models", "judges", "roles", mode="before")
    @classmethod
    def _provider_specific(cls, value: Any) -> Any:
        """Validate each model against its provider's own settings model."""
        if isinstance(value, dict):
            return {name: _provider_config({"id": name, **entry} if isinstance(entry, dict) else entry)
                    for name, entry in value.items()}
        if not isinstance(value, list):
            return value
        return [_provider_config(entry) for entry in value]

    @field_validator("models", "judges")
    @classmethod
    def _unique_ids(cls, value: list[ModelConfig]) -> list[ModelConfig]:
        ids = [m.id for m in value]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate model id(s): {', '.join(dup)}")
        return value

    @field_validator("review")
    @classmethod
    def _miscalibrated_route(cls, value: ReviewSettings, info: ValidationInfo) -> ReviewSettings:
        judges = [j.id for j in info.data.get("judges") or []]
        route = value.on_miscalibrated
        if route not in ("warn", "review") and route not in judges:
            raise ValueError(f"on_miscalibrated: {route!r} is neither warn, review nor a judge id "
                             f"(judges: {', '.join(judges) or 'none'})")
        primaries = [j.id for j in info.data.get("judges") or [] if j.role in (None, "primary")]
        if primaries and route == primaries[0]:
            raise ValueError(f"on_miscalibrated: {route!r} is the primary judge itself; name another judge (its "
                             "scores replace the primary's where the primary is miscalibrated), or warn or review")
        return value

    @field_validator("roles")
    @classmethod
    def _role_ids_are_their_own(cls, value: dict[str, ModelConfig], info: ValidationInfo) -> dict[str, ModelConfig]:
        taken = {m.id for section in ("models", "judges") for m in info.data.get(section) or []}
        for name, config in value.items():
            if config.id in taken:
                raise ValueError(_clash(name, config.id))
        return value

    @model_validator(mode="after")
    def _seed_engines(self) -> Experiment:
        """A provider without per-request seeds (vllm) draws samples from its engine's seed: the experiment's
        `seed` unless the model sets its own (`ModelConfig.seeded_by`)."""
        self.models = [m.seeded_by(self.seed) for m in self.models]
        self.judges = [m.seeded_by(self.seed) for m in self.judges]
        self.roles = {name: m.seeded_by(self.seed) for name, m in self.roles.items()}
        return self

    @property
    def path(self) -> Path:
        return self._path or Path(f"{self.name}.yaml").resolve()

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def where(self, *loc: str | int) -> str:
        """`file:line` of a key path (e.g. `where("variants", 1)`), or the file when the line is unknown."""
        line = yaml_line(self._node, loc) if self._node is not None else None
        return f"{self.path}:{line}" if line else str(self.path)

    def resolve(self, relative: str) -> Path:
        p = Path(relative).expanduser()
        return p if p.is_absolute() else (self.base_dir / p)

    @property
    def store_path(self) -> Path:
        return self.resolve(self.store) if self.store else self.base_dir / f"{self.name}.sqlite"

    def model(self, model_id: str) -> ModelConfig:
        for m in self.all_models():
            if m.id == model_id:
                return m
        raise ConfigError(f"{self.path}: no model, judge or role model with id {model_id!r}")

    def all_models(self) -> list[ModelConfig]:
        """Models, judges and role models."""
        return [*self.models, *self.judges, *self.roles.values()]

    def role(self, name: str) -> ModelConfig:
        """The model configured for a role (`roles: {NAME: …}`); ConfigError when there is none."""
        if name not in self.roles:
            raise ConfigError(f"{self.where('roles')}: no model for role {name!r} under `roles:` "
                              f"(roles: {', '.join(self.roles) or 'none'})")
        return self.roles[name]

    def validate_options(self, options: type[BaseModel]) -> Any:
        """`options:` validated against a task's options model; ConfigError naming each bad key and line.

        `replicate: paper` first sets every departure the options declare (`config.Departure`) to the paper's
        value; a key the file sets to another value is an error naming it. The departures' values are then
        `self.departures` (the report's and the export's table, part of the compile fingerprint)."""
        given = self.options
        if self.replicate == "paper":
            given, conflicts = paper_options(options, self.options)
            if conflicts:
                declared = declared_departures(options)
                raise ConfigError("\n".join([f"{self.path}: invalid experiment file", *(problem_line(
                    ("options", key), f"{self.options[key]!r} contradicts `replicate: paper` (the paper's value "
                    f"is {declared[key].paper!r}, {declared[key].section}); remove the key, or set `replicate: "
                    "toolkit` to keep your value", self._node) for key in conflicts)]))
        try:
            validated = options.model_validate(given)
        except ValidationError as exc:
            raise ConfigError("\n".join([f"{self.path}: invalid experiment file", *validation_problems(
                exc, ("options",), self._node, known=list(options.model_fields))])) from None
        self._departures = departure_settings(validated, self.options)
        return validated

    @property
    def departures(self) -> list[DepartureSetting]:
        """Each departure from a paper the task's options declare, with the value this experiment uses and
        whether it is the paper's (empty before the task validated its options, or when it declares none)."""
        return list(self._departures)

    def departure_rows(self) -> list[dict[str, Any]]:
        """`departures` as JSON-able rows (the report's `departures.csv`, the export, the run's metadata)."""
        return [d.model_dump(mode="json") for d in self._departures]

    def judge_rubric(self, judge: ModelConfig, default: str) -> Rubric:
        """The judge's rubric: its `rubric:` (a packaged name or a file relative to the experiment), else the
        task's `default` (e.g. "rlaif")."""
        from dialectbias.judges import load_rubric

        return load_rubric(judge.rubric or default, self.base_dir)

    @property
    def primary_judge(self) -> ModelConfig | None:
        primaries = [j for j in self.judges if j.role in (None, "primary")]
        return primaries[0] if primaries else None


def _provider_config(entry: Any) -> Any:
    if isinstance(entry, dict) and isinstance(entry.get("provider"), str):
        try:
            cls = config_class(entry["provider"])
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return cls.model_validate(entry)
    return entry


def _validate_models(data: dict[str, Any], node: Any) -> tuple[list[str], set[str]]:
    """Validate each model/judge against its provider's settings; replace dicts by models in place.
    Returns the problems and the sections they were found in."""
    problems: list[str] = []
    sections: set[str] = set()
    for section in ("models", "judges", "roles"):
        entries = data.get(section)
        if isinstance(entries, dict):  # roles: name -> config, whose id defaults to the name
            entries.update({name: {"id": name, **entry} for name, entry in entries.items() if isinstance(entry, dict)})
        elif not isinstance(entries, list):
            continue
        for i, entry in (entries.items() if isinstance(entries, dict) else enumerate(entries)):
            if not isinstance(entry, dict):
                continue
            provider = entry.get("provider")
            if not isinstance(provider, str) or provider not in provider_names():
                problems.append(_provider_problem(node, section, i, provider))
                sections.add(section)
                continue
            cls = config_class(provider)
            if section != "judges":
                judge_only = [key for key in ModelConfig.JUDGE_ONLY if key in entry]
                problems += [problem_line((section, i, key), f"only a judge takes {key!r} (move the entry under "
                                          "judges:, or remove the key)", node) for key in judge_only]
                if judge_only:
                    sections.add(section)
                    continue
            try:
                entries[i] = cls.model_validate(entry)
            except ValidationError as exc:
                problems += validation_problems(exc, (section, i), node, known=list(cls.model_fields))
                sections.add(section)
    clashes = _role_clashes(data, node)
    if clashes:
        problems += clashes
        sections.add("roles")
    return problems, sections


def _clash(role: str, model_id: str) -> str:
    return f"role {role!r}: id {model_id!r} is already a model or judge id (give the role model an id of its own)"


def _role_clashes(data: dict[str, Any], node: Any) -> list[str]:
    """Role models whose id is a model's or a judge's (each with its line)."""
    roles = data.get("roles")
    if not isinstance(roles, dict):
        return []
    taken = {m.id for section in ("models", "judges") for m in data.get(section) or []
             if isinstance(m, ModelConfig)}
    problems = []
    for name, config in roles.items():
        if isinstance(config, ModelConfig) and config.id in taken:  # the line of `id:`, else of the role
            problems.append(problem_line(("roles", name, "id"), _clash(name, config.id), node))
    return problems


def _provider_problem(node: Any, section: str, i: int | str, provider: Any) -> str:
    names = provider_names()
    if provider is None:
        return problem_line((section, i, "provider"), f"missing (one of: {', '.join(names)})", node)
    close = difflib.get_close_matches(str(provider), names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return problem_line((section, i, "provider"),
                        f"unknown provider {provider!r}{hint}; expected one of: {', '.join(names)}", node)


def _judge_files(exp: Experiment, base_dir: Path, node: Any) -> list[str]:
    """Each judge's `rubric:` (a packaged name or a rubric file) and `template:` (a file) must load."""
    from dialectbias.judges import load_rubric

    problems = []
    for i, judge in enumerate(exp.judges):
        if judge.rubric is not None:
            try:
                load_rubric(judge.rubric, base_dir)
            except ConfigError as exc:
                problems.append(problem_line(("judges", i, "rubric"), str(exc), node))
        if judge.template is not None:
            template = Path(judge.template).expanduser()
            template = template if template.is_absolute() else base_dir / template
            if not template.is_file():
                problems.append(problem_line(("judges", i, "template"), f"{template}: template file not found", node))
    return problems


def load_experiment(path: str | Path) -> Experiment:
    """Read and validate an experiment file; raise ConfigError with the file and key at fault.

    The task's own checks (its options, data, roles) come on top: `dialectbias.api.load_experiment`."""
    path = Path(path).expanduser().resolve()
    text = read_text_file(path, ConfigError, "experiment file")
    data, node = load_yaml(text, str(path), ConfigError)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys (name, task, data, models, …)")
    problems, reported = _validate_models(data, node)  # reported: sections not to report twice
    try:
        exp = Experiment.model_validate(data)
    except ValidationError as exc:
        problems += validation_problems(exc, (), node, skip=reported, known=list(Experiment.model_fields))
    if not problems:
        problems += _judge_files(exp, path.parent, node)
    if problems:
        raise ConfigError("\n".join([f"{path}: invalid experiment file", *problems]))
    exp._path, exp._node = path, node
    return exp
