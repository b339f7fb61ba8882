"""The SQLite run store."""

from dialectbias.store._kinds import OVERRIDE_KIND
from dialectbias.store._lock import RunLock
from dialectbias.store._records import ResultCounts, StageResult
from dialectbias.store._schema import SCHEMA_VERSION
from dialectbias.store._store import Store, dumps, dumps_ordered

__all__ = ["OVERRIDE_KIND", "SCHEMA_VERSION", "ResultCounts", "RunLock", "StageResult", "Store", "dumps",
           "dumps_ordered"]
