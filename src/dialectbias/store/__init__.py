"""The SQLite run store."""

from dialectbias.store._content import TEXT_REF_MIN_CHARS, ContentRow, Packed, pack_messages, pack_schema
from dialectbias.store._lock import RunLock
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import PARTS_KEY, Store, dumps, dumps_ordered

__all__ = ["PARTS_KEY", "SCHEMA_VERSION", "TEXT_REF_MIN_CHARS", "ContentRow", "Packed", "RunLock", "Store", "dumps",
           "dumps_ordered", "pack_messages", "pack_schema"]
