"""Typed records and dataset loaders."""

from dialectbias.data._banglaverse import BanglaVerseLoad, banglaverse_root, items_dir, iter_banglaverse
from dialectbias.data._banglaverse import Kind as BanglaVerseKind
from dialectbias.data._content import (
    ChatMessage,
    ContentImage,
    ContentPart,
    ContentText,
    image_part,
    message_text,
    text_part,
)
from dialectbias.data._corpus import (
    Corpus,
    CorpusReport,
    ParallelPair,
    corpus_files,
    corpus_fingerprint,
    load_corpus,
    pair_id,
    read_csv_rows,
    read_xlsx_rows,
)
from dialectbias.data._corpus_fingerprint import CorpusFingerprint, describe_changes, file_digest
from dialectbias.data._loaders import DIALECT_HINT, MAX_NAMED, LoadReport, field_values, iter_items, read_jsonl
from dialectbias.data._media import ImageInfo, MediaError, image_info, is_url, load_image, resolve_item_image
from dialectbias.data._records import InputLimits, Item
from dialectbias.data._transcripts import Transcript, TranscriptCounts
from dialectbias.dialects import STANDARD, known_variants, unknown_variant_message

__all__ = [
    "DIALECT_HINT",
    "MAX_NAMED",
    "STANDARD",
    "BanglaVerseKind",
    "BanglaVerseLoad",
    "ChatMessage",
    "ContentImage",
    "ContentPart",
    "ContentText",
    "Corpus",
    "CorpusFingerprint",
    "CorpusReport",
    "ImageInfo",
    "InputLimits",
    "Item",
    "LoadReport",
    "MediaError",
    "ParallelPair",
    "Transcript",
    "TranscriptCounts",
    "banglaverse_root",
    "corpus_files",
    "corpus_fingerprint",
    "describe_changes",
    "field_values",
    "file_digest",
    "image_info",
    "image_part",
    "is_url",
    "items_dir",
    "iter_banglaverse",
    "iter_items",
    "known_variants",
    "load_corpus",
    "load_image",
    "message_text",
    "pair_id",
    "read_csv_rows",
    "read_jsonl",
    "read_xlsx_rows",
    "resolve_item_image",
    "text_part",
    "unknown_variant_message",
]
