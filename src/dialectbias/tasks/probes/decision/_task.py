"""Decision probe (SPEC §4 P4 "Decision task"; Bui et al. 2025 §3.4, App. A.8, B.3, D.2): two writers, two short
profiles, then a decision between two options — one fitting the stereotype trait, one its opposite.

Same writers, settings, traits, prefixes and seeding as the association probe (`ProbeTask`). Two stages:
`generate` (every model answers every prompt) and `extract` (the `extractor` role's model reads the decision
out of each answer as JSON, schema per prompt; a regex fallback reads what it cannot). Each extraction is one
row of the store's `judgments` table (rubric `decision_extraction`); the decision score (+1 stereotypical,
−1 not; App. B.3: 0 / ±0.5 with neutral answers) is `dialectbias.metrics.decision_score`.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from dialectbias.config import Departure, Experiment
from dialectbias.data import STANDARD, Item
from dialectbias.errors import ConfigError
from dialectbias.judges import parse_structured
from dialectbias.metrics import decision_score
from dialectbias.providers import ModelConfig
from dialectbias.run import Outcome, RequestSpec, Skipped, Stage, StageYield, Write
from dialectbias.store import Store, dumps, raw_outputs_by_first_ref, result_output
from dialectbias.tasks.probes._probe import DEFAULT_PREFIX, ProbeOptions, ProbeTask
from dialectbias.tasks.probes._prompt import writer_prefix
from dialectbias.tasks.probes._topics import STAGE as LABEL_STAGE
from dialectbias.tasks.probes._topics import label_stages, label_yield
from dialectbias.tasks.probes.decision._extract import (
    Extraction,
    ExtractorAnswer,
    extract_decision,
    extraction_messages,
    extraction_schema,
    from_text,
)
from dialectbias.tasks.probes.decision._names import countries
from dialectbias.tasks.probes.decision._paper_lines import from_paper_lines, paper_extraction_messages
from dialectbias.tasks.probes.decision._profiles import split_profiles
from dialectbias.tasks.probes.decision._prompt import (
    DECISION_NEUTRAL_INSTRUCTION,
    DECISION_NEUTRAL_VARIANTS,
    DecisionPrompt,
    Scenario,
    build_decision_prompt,
    load_scenarios,
)

if TYPE_CHECKING:
    from dialectbias.report import ReportContent

RUBRIC = "decision_extraction"
EXTRACTOR_ROLE = "extractor"


class DecisionOptions(ProbeOptions):
    #: departures from the German paper (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "max_tokens": Departure(350, "German paper App. A.3 (max generated length 350)",
                                "two profiles and a decision often run past 350 tokens, cutting the decision off"),
        "extractor_temperature": Departure(0.7, "German paper App. A.3; PROCEDURES.md §1.5 (the extractor "
                                           "samples like the models)", "0 makes the extraction repeatable"),
        "extraction_format": Departure("lines", "German paper App. A.8; PROCEDURES.md §1.5",
                                       "a schema-constrained JSON answer cannot name an unknown option, and the "
                                       "regex fallback reads what the line rule rejects"),
    }
    max_tokens: int = Field(default=600, ge=1, description="answer length limit (tokens) of the models: two profiles "
                            "of up to 100 words and the decision (SPEC's 350 for the probes cuts the decision off "
                            "in longer answers; the paper allowed 1,024)")
    scenarios: list[str] | None = Field(
        default=None, description="scenario names to run (e.g. [uneducated_1, rural_2]); default: every scenario "
        "of each trait (three per trait in the packaged file)")
    scenarios_file: str | None = Field(
        default=None, description="YAML file of your own decision scenarios (default: the package's "
        "dialectbias/resources/decision_scenarios.yaml; relative to the experiment file)")
    extractor_temperature: float = Field(default=0.0, ge=0, description="sampling temperature of the extractor "
                                         "(the paper's extractor sampled at 0.7; 0 makes extraction repeatable)")
    extractor_max_tokens: int = Field(default=100, ge=1, description="answer length limit (tokens) of the extractor")
    name_country: str | None = Field(
        default="germany", description="persona-name gender (German paper App. E): gender-guesser's country whose "
        "name frequencies decide (e.g. germany, austria, swiss; null: all countries)")
    gender_mostly: Literal["binary", "separate"] = Field(
        default="binary", description="persona-name gender: binary counts gender-guesser's mostly_female / "
        "mostly_male as female / male in the shares (the paper inferred binary gender); separate leaves them out")
    extraction_format: Literal["json", "lines"] = Field(
        default="json", description="json: the extractor answers a JSON object under a per-prompt schema, with a "
        "regex fallback; lines: the paper's prompt and format ('Writer A: <option>' lines, App. A.8), read by its "
        "strict rule with no fallback (PROCEDURES.md §1.5)")


class DecisionTask(ProbeTask):
    """Decision probe: two writers — standard vs. dialect — get short profiles and a decision between a
    stereotype-consistent and an opposite option; the extractor model reads the decision (regex fallback);
    score +1 stereotypical / −1 not, per model × trait with bootstrap CIs and t-tests (German paper §3.4)."""

    name = "decision"
    required_roles = (EXTRACTOR_ROLE,)
    item_format = (
        "Naming setting (default): no `data:` needed — prompts are built from `options.languages` and the writer "
        "labels: language × dialect × trait × sample × scenario.\n"
        "Usage setting: `data:` items with a standard text and dialect versions of it, one JSON object per "
        "line (or .csv with columns id, variants.standard, variants.<dialect> …):\n"
        '{"id": "t001", "variants": {"standard": "Ich gehe nach Hause.", "bavarian": "I geh hoam."}}\n'
        "Each item × dialect × trait × scenario is one prompt, with the standard text as one writer and the "
        "dialect text as the other (which one is writer A, and which option comes first, is random). Needs "
        "`roles: {extractor: {…}}`: the model that reads the decision out of each answer."
    )
    Options = DecisionOptions
    request_keys: ClassVar[Mapping[str, str]] = {
        "scenario": "the decision scenario, e.g. uneducated_1 (options.scenarios)", **ProbeTask.request_keys}

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        o = self.options
        self.scenarios: dict[str, list[Scenario]] = load_scenarios(
            experiment.resolve(o.scenarios_file) if o.scenarios_file else None)
        names = {s.name for group in self.scenarios.values() for s in group}
        unknown = [s for s in (o.scenarios or []) if s not in names]
        if unknown:
            raise ConfigError(f"{experiment.path}: options.scenarios: unknown scenario(s) {unknown}; "
                              f"known: {sorted(names)}")
        known_countries = countries()
        if o.name_country is not None and known_countries and o.name_country not in known_countries:
            raise ConfigError(f"{experiment.where('options', 'name_country')}: options.name_country: unknown country "
                              f"{o.name_country!r}; "
                              f"gender-guesser knows: {', '.join(known_countries)}")
        missing = [t for t in self.trait_names if not self._trait_scenarios(t)]
        if missing and not o.scenarios:
            raise ConfigError(f"{experiment.path}: no decision scenario for trait(s) {missing} in "
                              f"{o.scenarios_file or 'the packaged decision_scenarios.yaml'}")

    def _trait_scenarios(self, trait: str) -> list[Scenario]:
        wanted = self.options.scenarios
        return [s for s in self.scenarios.get(trait, []) if wanted is None or s.name in wanted]

    def input_files(self) -> list[Path]:
        extra = [self.exp.resolve(self.options.scenarios_file)] if self.options.scenarios_file else []
        return [*super().input_files(), *extra]

    # -- generation -------------------------------------------------------------------------
    def scenario_rng(self, item: Item, scenario: str) -> random.Random:
        """Seeded per item × scenario; every prefix of `options.prefix` gets the same draws."""
        key = f"{self.exp.seed}:{item.id}:{scenario}"
        return random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))

    def prompt(self, item: Item, scenario: Scenario, prefix: str = DEFAULT_PREFIX,
               equal_option: str | None = None) -> DecisionPrompt:
        trait = self.item_trait(item)
        if trait is None:
            raise ValueError(f"item {item.id!r}: unknown trait {item.metadata.get('trait')!r}")
        dialect = item.metadata["dialect"]
        return build_decision_prompt(item.variants[STANDARD], item.variants[dialect], trait, scenario,
                                     self.scenario_rng(item, scenario.name), allow_neutral=self.options.allow_neutral,
                                     prefix=writer_prefix(prefix),
                                     neutral_instruction=DECISION_NEUTRAL_VARIANTS.get(
                                         equal_option or "", DECISION_NEUTRAL_INSTRUCTION))

    def _requests(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = self.generation_params(model.params)
        for item in store.iter_items():
            trait = str(item.metadata.get("trait"))
            if self.item_trait(item) is None:
                yield Skipped(f"item {item.id!r}: unknown trait {trait!r}")
                continue
            scenarios = self._trait_scenarios(trait)
            if not scenarios:
                yield Skipped(f"{item.id}", kind=f"no decision scenario selected for trait {trait!r}")
                continue
            setting = item.metadata.get("setting", self.options.setting)
            for scenario in scenarios:
                for prefix, equal_option in ((p, e) for p in self.options.prefixes for e in self.equal_options()):
                    prompt = self.prompt(item, scenario, prefix, equal_option)
                    separate = (equal_option,) if equal_option in DECISION_NEUTRAL_VARIANTS else ()
                    yield RequestSpec(
                        stage="generate", model=model, item_id=item.id, variant=item.metadata["dialect"],
                        template=f"decision/{setting}", params=params,
                        messages=[{"role": "user", "content": prompt.text}],
                        draw=self.draw(model, item, prefix, scenario.name, *separate),
                        meta={"prompt": prompt.model_dump(), "trait": trait, "scenario": scenario.name,
                              "language": item.metadata.get("language"), "setting": setting,
                              "prefix": prefix, **({"equal_option": equal_option} if separate else {})})

    # -- extraction -------------------------------------------------------------------------
    def _extractions(self, store: Store, extractor: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = {"temperature": self.options.extractor_temperature, "max_tokens": self.options.extractor_max_tokens,
                  **extractor.params}
        for model in self.generation_models():
            for row in store.stage_results("generate", model.id, template_prefix="decision/", ordered=True):
                prompt = DecisionPrompt.model_validate(row.meta["prompt"])
                if self.options.extraction_format == "lines":  # the paper's prompt, no schema (App. A.8)
                    messages, schema = paper_extraction_messages(prompt, row.output or ""), None
                else:
                    messages, schema = extraction_messages(prompt, row.output or ""), extraction_schema(prompt)
                yield RequestSpec(
                    stage="extract", model=extractor, item_id=row.item_id, variant=row.variant,
                    template="decision/extract", params=params, refs=[row.request_id],
                    messages=messages, json_schema=schema,
                    schema_name=RUBRIC, meta={"model_id": model.id, "prompt": row.meta["prompt"]})

    def _finalize_extraction(self, store: Store, row: sqlite3.Row, outcome: Outcome) -> list[Write]:
        """One `judgments` row per extraction: the extractor's JSON (or why it failed), the decision read from
        it or by the regex fallback, and its decision score (None when unextractable)."""
        meta, refs = json.loads(row["meta"]), json.loads(row["refs"])
        prompt = DecisionPrompt.model_validate(meta["prompt"])
        generation = result_output(store, refs[0]) or ""
        parsed = outcome.parsed
        value = parsed.value if parsed is not None and parsed.status != "failed" else None
        extraction = from_paper_lines(outcome.output, prompt) if self.options.extraction_format == "lines" else \
            extract_decision(value, outcome.output, generation, prompt,
                             json_error=parsed.error if parsed is not None else None)
        score = None
        if extraction.ok:
            score = decision_score(*extraction.dialect_standard(prompt))
        record = {
            "request_id": row["request_id"], "judge_id": row["model_id"], "model_id": meta["model_id"],
            "item_id": row["item_id"], "variant": row["variant"], "rubric": RUBRIC, "raw_output": outcome.output,
            "source_request_id": outcome.source_request_id,
            "parse_status": parsed.status if parsed is not None else "ok" if extraction.ok else "failed",
            "parsed": dumps({"extractor": None if value is None else value.model_dump(),
                             "extraction": extraction.model_dump()}),
            "score": score, "confidence": None, "checks": "{}", "flags": dumps(["inferred"] if extraction.inferred
                                                                                 else []),
            "clipped": "{}", "needs_review": 0, "flagged": int(extraction.inferred), "reason": extraction.reason}
        return [("judgments", record)]

    def stages(self) -> list[Stage]:
        return [self.generation_stage(self._requests),
                Stage("extract", [self.exp.role(EXTRACTOR_ROLE)], self._extractions,
                      rubric=None if self.options.extraction_format == "lines" else ExtractorAnswer,
                      finalize=self._finalize_extraction), *label_stages(self)]

    # -- scoring ----------------------------------------------------------------------------
    def _extractor_outputs(self, store: Store) -> dict[str, tuple[str | None, str | None]]:
        """generation request id -> (extraction status, the extractor's text that was parsed) of the current
        extraction requests (status None: not done yet)."""
        out: dict[str, tuple[str | None, str | None]] = {}
        for row in store.stage_results("extract", ok_only=False, template_prefix="decision/"):
            out[row.refs[0]] = (row.status, row.output)
        for first, raw in raw_outputs_by_first_ref(store, RUBRIC):
            if first in out and out[first][0] == "ok":
                out[first] = ("ok", raw)  # the text the JSON was parsed from: the re-ask's, if re-asked
        return out

    def scored_rows(self, store: Store) -> Iterator[dict[str, Any]]:
        """One row per prompt answered (successful generation): how its decision was read and its score.
        The decision is re-read from the stored texts (extractor JSON, regex fallback), so a re-run report
        follows the current extraction rules without new calls."""
        extracted = self._extractor_outputs(store)
        for row in store.stage_results("generate", template_prefix="decision/", ordered=True):
            meta = row.meta
            prompt = DecisionPrompt.model_validate(meta["prompt"])
            status, raw = extracted.get(row.request_id, (None, None))
            extraction = self._read_extraction(status, raw, row.output or "", prompt)
            out = self._row(row.request_id, row.model_id, row.item_id, row.variant, meta, prompt, status, extraction)
            out["regex_agrees"] = _regex_agrees(extraction, row.output or "", prompt)
            profiles = split_profiles(row.output or "")
            standard_writer = prompt.standard_writer
            out["profile_words_dialect"] = len(profiles[prompt.dialect_writer].split()) if profiles else None
            out["profile_words_standard"] = len(profiles[standard_writer].split()) if profiles else None
            yield out

    def _read_extraction(self, status: str | None, raw: str | None, generation: str,
                         prompt: DecisionPrompt) -> Extraction:
        """The decision of one answer from the extractor's stored text: the paper's line rule alone
        (`extraction_format: lines`), else the JSON with the regex fallback."""
        if self.options.extraction_format == "lines":
            return from_paper_lines(raw, prompt) if status == "ok" else Extraction(
                method="none", reason=f"extractor: extractor call {status or 'not made yet'}")
        value, error = None, None
        if status == "ok":
            parsed = parse_structured(raw or "", ExtractorAnswer)
            value, error = (parsed.value, None) if parsed.status != "failed" else (None, parsed.error)
        return extract_decision(value, raw if status == "ok" else None, generation, prompt,
                                json_error=error if status == "ok" else f"extractor call {status or 'not made yet'}")

    @staticmethod
    def _row(request_id: str, model: str, item_id: str, dialect: str, meta: dict[str, Any], prompt: DecisionPrompt,
             status: str | None, extraction: Extraction) -> dict[str, Any]:
        dialect_choice = standard_choice = None
        score = None
        if extraction.ok:
            dialect_choice, standard_choice = extraction.dialect_standard(prompt)
            score = decision_score(dialect_choice, standard_choice)
        return {"request_id": request_id, "model": model, "item_id": item_id, "language": meta.get("language"),
                "dialect": dialect, "trait": meta["trait"], "scenario": meta.get("scenario"),
                "setting": meta.get("setting"), "prefix": meta.get("prefix", DEFAULT_PREFIX),
                "equal_option": meta.get("equal_option"),
                "dialect_writer": prompt.dialect_writer, "trait_option": prompt.trait_option,
                "opposite_option": prompt.opposite_option, "extractor_status": status or "pending",
                "method": extraction.method, "extracted": extraction.ok, "inferred": extraction.inferred,
                "dialect_choice": dialect_choice, "standard_choice": standard_choice,
                "same_option": extraction.ok and dialect_choice == standard_choice
                and dialect_choice in ("trait", "opposite"),
                "score": score, "reason": extraction.reason}

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Generation: successful answers; extraction: answers whose decision could be read."""
        out = [y for y in super().stage_yields(store) if y.stage not in ("extract", LABEL_STAGE)]
        extractor = self.exp.role(EXTRACTOR_ROLE).id
        rows = list(self.scored_rows(store))
        asked = sum(1 for r in rows if r["extractor_status"] != "pending")
        read = sum(1 for r in rows if r["extracted"])
        detail = (f"{read} of {len(rows)} answers with a decision read ({len(rows) - read} unextractable; "
                  f"{asked} extractor answers)" if rows else "no answers to extract from")
        out.append(StageYield("extract", extractor, read, detail))
        return out + label_yield(self, store)

    def summary_lines(self, store: Store) -> list[str]:
        counts: dict[str, list[int]] = {}
        for row in self.scored_rows(store):
            c = counts.setdefault(row["model"], [0, 0, 0])
            c[0 if row["extracted"] else 1] += 1
            c[2] += row["method"].startswith("regex")
        return [f"{model}: {ok} decisions read ({regex} by the regex fallback) · {bad} unextractable"
                for model, (ok, bad, regex) in counts.items()]

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.probes.decision._report import write_decision_report

        return write_decision_report(self, store, out_dir)


def _regex_agrees(extraction: Extraction, generation: str, prompt: DecisionPrompt) -> bool | None:
    """A check on the extractor: does the regex reading of the answer itself give the same decision? None when
    the decision came from that reading, or when the regex cannot read the answer."""
    if not extraction.ok or extraction.method == "regex_generation":
        return None
    own = from_text(generation, prompt, "regex_generation")
    if isinstance(own, str):
        return None
    return (own.writer_a, own.writer_b) == (extraction.writer_a, extraction.writer_b)


__all__ = ["DecisionOptions", "DecisionTask"]
