"""Typed records and dataset loaders."""

from dialectbias.data._loaders import iter_items, read_jsonl
from dialectbias.data._records import Item

__all__ = ["Item", "iter_items", "read_jsonl"]
