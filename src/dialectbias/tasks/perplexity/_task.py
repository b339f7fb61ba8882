"""Task `perplexity`: every model scores every variant text of every item (prompt token logprobs), and the report
gives per model × variant the texts' perplexity, with noisy/standard and dialect/standard ratios (German
dialect-bias paper, App. C.2, Figure 14: "the perplexity of the model for the dialectal text is significantly
lower than for the noisy text")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.config import Experiment
from dialectbias.errors import ConfigError
from dialectbias.providers import PROMPT_LOGPROBS, ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage, StageYield
from dialectbias.store import Store
from dialectbias.tasks._base import Task
from dialectbias.tasks.perplexity._scores import Aggregate
from dialectbias.tasks.perplexity._texts import STAGE, text_rows

if TYPE_CHECKING:
    from dialectbias.report import ReportContent

TEMPLATE = "perplexity/prompt_logprobs"


class PerplexityOptions(BaseModel):
    """Options of the `perplexity` task (`dialectbias tasks perplexity` lists them). None changes a request: the
    report computes everything from the stored logprobs with the options as they are when it runs."""

    model_config = ConfigDict(extra="forbid")

    aggregate: Aggregate = Field(
        default="per_text", description="how a model × variant's texts are summarised: per_text, the mean of the "
        "texts' perplexities (German paper App. C.2, Figure 14: 'mean perplexity'), or pooled, exp(−Σ logprobs / "
        "Σ tokens) over all the texts' tokens; the table gives both, this one is `perplexity` and the ratios")
    baseline: str = Field(default="standard", min_length=1,
                          description="the variant the ratios divide by (noisy/standard, dialect/standard)")
    n_resamples: int = Field(default=10_000, ge=100, description="bootstrap resamples for the ratios' CIs")
    confidence: float = Field(default=0.95, gt=0, lt=1, description="the ratios' CI level")


class PerplexityTask(Task):
    """Perplexity control: the prompt logprobs of every variant text (`providers._logprobs`), per model ×
    variant the perplexity, and how far noisy and dialect texts are from standard ones (App. C.2)."""

    name = "perplexity"
    Options = PerplexityOptions
    item_format = (
        "`data:` items with variants, one JSON object per line (.jsonl, .csv or .parquet), e.g. the usage "
        "setting's file of the stereotype probes with its noisy control (`dialectbias build noise`):\n"
        '{"id": "b1", "variants": {"standard": "So gut.", "bar": "So guad.", '
        '"noisy": "So gt."}}\n'
        "Each variant's text is scored as it is (no prompt around it). The models' provider must return prompt "
        "token logprobs: hf, vllm, or openai against a server that echoes them (vLLM's /v1/completions).")
    no_imports: ClassVar[str] = ("perplexity needs each model's own prompt token logprobs; there are no "
                                 "generations to import")

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.options: PerplexityOptions

    def check(self) -> None:
        super().check()
        for i, model in enumerate(self.exp.models):
            if not model.CAPABILITIES.prompt_logprobs:
                raise ConfigError(
                    f"{self.exp.where('models', i)}: model {model.id!r}: provider {model.provider!r} cannot return "
                    "prompt token logprobs (capability 'prompt_logprobs'), which task 'perplexity' needs; use "
                    "provider hf, vllm, or openai against a server that echoes prompt logprobs (vLLM's)")
            if self.exp.executor == "ray" and model.CAPABILITIES.ray_pass == "vllm_engine":
                raise ConfigError(
                    f"{self.exp.where('models', i)}: model {model.id!r}: executor ray sends vllm models chat "
                    "requests only (no prompt logprobs); use executor local (or serve the model with `vllm serve` "
                    "and use provider openai)")

    def stages(self) -> list[Stage]:
        return [Stage(STAGE, self.exp.models, self._requests)]

    def _requests(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        for item in self.load_items():
            for variant, text in item.variants.items():
                if not isinstance(text, str) or not text.strip():
                    yield Skipped(f"{model.id}/{item.id}/{variant}", kind="no text to score")
                    continue
                yield RequestSpec(stage=STAGE, model=model, item_id=item.id, variant=variant, template=TEMPLATE,
                                  messages=[{"role": "user", "content": text}], params={PROMPT_LOGPROBS: True})

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Usable: results whose logprobs parse and score at least one token."""
        counts = super().stage_yields(store)
        rows, problems = text_rows(store, [m.id for m in self.exp.models])
        out = []
        for y in counts:
            usable = sum(1 for r in rows if r["model"] == y.model_id)
            bad = sum(1 for p in problems if p.model == y.model_id)
            out.append(StageYield(y.stage, y.model_id, usable,
                                  y.detail + (f"; {bad} unusable (no scored token or malformed)" if bad else "")))
        return out

    def summary_lines(self, store: Store) -> list[str]:
        _, problems = text_rows(store, [m.id for m in self.exp.models])
        if not problems:
            return []
        first = problems[0]
        return [f"perplexity: {len(problems)} scored text(s) unusable, e.g. {first.model}/{first.item_id}/"
                f"{first.variant}: {first.reason}"]

    def export_tables(self, store: Store) -> dict[str, list[dict[str, Any]]]:
        rows, _ = text_rows(store, [m.id for m in self.exp.models])
        return {"perplexity_texts": rows}

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.perplexity._report import write_report

        return write_report(self, store, out_dir)


__all__ = ["PerplexityOptions", "PerplexityTask"]
