"""Typed records and dataset loaders."""

from dialectbias.data._loaders import DIALECT_HINT, LoadReport, iter_items, read_jsonl
from dialectbias.data._records import InputLimits, Item
from dialectbias.data._registry import known_variants, unknown_variant_message

__all__ = ["DIALECT_HINT", "InputLimits", "Item", "LoadReport", "iter_items", "known_variants", "read_jsonl",
           "unknown_variant_message"]
