"""Meeting other evaluation harnesses: export an experiment's prompts for inspect_ai and lm-evaluation-harness,
and import the answers they produce as the experiment's generations (docs/other-harnesses.md)."""

from dialectbias.interop._export import export_prompts
from dialectbias.interop._foreign import HARNESSES, foreign_records, inspect_records, lm_eval_records
from dialectbias.interop._ids import parse_sample_id, sample_id
from dialectbias.interop._inspect_dataset import write_inspect_dataset
from dialectbias.interop._lm_eval_task import write_lm_eval_task
from dialectbias.interop._prompts import Prompt, exported_prompts

__all__ = [
    "HARNESSES",
    "Prompt",
    "export_prompts",
    "exported_prompts",
    "foreign_records",
    "inspect_records",
    "lm_eval_records",
    "parse_sample_id",
    "sample_id",
    "write_inspect_dataset",
    "write_lm_eval_task",
]
