"""The SQLite run store."""

from dialectbias.store._content import TEXT_REF_MIN_CHARS, ContentRow, Packed, pack_messages, pack_schema
from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._lock import RunLock
from dialectbias.store._records import ResultCounts, StageResult
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import PARTS_KEY, Store, dumps, dumps_ordered

__all__ = ["OVERRIDE_KIND", "PARTS_KEY", "SCHEMA_VERSION", "TEXT_REF_MIN_CHARS", "ContentRow", "Packed", "ResultCounts",
           "RunLock", "StageResult", "Store", "dumps", "dumps_ordered", "pack_messages", "pack_schema"]
