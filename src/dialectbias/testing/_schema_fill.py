"""Deterministic JSON values that conform to a (simple) JSON schema.

Every leaf value is chosen from a hash of ``(seed, json-path)``, so the same prompt always gets
the same object and different prompts get different, reproducible values (e.g. judge scores
spread over ``[minimum, maximum]``). Supported: object (properties, required; property order is
kept), string (enum, const, minLength, maxLength), integer and number (minimum, maximum,
exclusiveMinimum, exclusiveMaximum, multipleOf for integers), boolean, null, array (items,
minItems, maxItems), type lists, anyOf/oneOf/allOf, and local ``$ref`` to ``$defs``/``definitions``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any


def _h(seed: bytes, path: str) -> int:
    return int.from_bytes(hashlib.blake2b(seed + b"\x00" + path.encode(), digest_size=8).digest(), "big")


def _resolve(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    while isinstance(schema, dict) and "$ref" in schema and depth < 32:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return {}
            node = node[part]
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**node, **extra} if isinstance(node, dict) else node
        depth += 1
    return schema


def fill_schema(schema: Any, seed: bytes, *, root: dict[str, Any] | None = None, path: str = "$") -> Any:
    """Return a value conforming to `schema`, chosen deterministically from `seed`."""
    if root is None:
        root = schema if isinstance(schema, dict) else {}
    schema = _resolve(schema, root)
    if schema is True or not isinstance(schema, dict):
        return f"reasoning {_h(seed, path) % 10**8:08d}"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        options = list(schema["enum"])
        return options[_h(seed, path) % len(options)]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [_resolve(o, root) for o in schema[key]]
            non_null = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            choice = (non_null or options)[0]
            return fill_schema(choice, seed, root=root, path=path)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part, root))
        merged.update({k: v for k, v in schema.items() if k != "allOf"})
        return fill_schema(merged, seed, root=root, path=path)

    typ = schema.get("type")
    if isinstance(typ, list):
        non_null = [t for t in typ if t != "null"]
        typ = non_null[0] if non_null else "null"
    if typ is None:
        if "properties" in schema:
            typ = "object"
        elif "items" in schema:
            typ = "array"
        else:
            typ = "string"

    h = _h(seed, path)
    if typ == "object":
        out: dict[str, Any] = {}
        props = schema.get("properties") or {}
        for name, sub in props.items():
            out[name] = fill_schema(sub, seed, root=root, path=f"{path}.{name}")
        for name in schema.get("required") or []:
            if name not in out:
                out[name] = f"reasoning {_h(seed, path + '.' + name) % 10**8:08d}"
        return out
    if typ == "array":
        lo = int(schema.get("minItems", 0))
        hi = int(schema.get("maxItems", max(lo, 3)))
        hi = max(lo, min(hi, max(lo, 3)))
        n = lo + (h % (hi - lo + 1)) if hi >= lo else lo
        if n == 0 and hi > 0:
            n = 1
        items = schema.get("items", {})
        return [fill_schema(items, seed, root=root, path=f"{path}[{i}]") for i in range(n)]
    if typ == "integer":
        lo_f, hi_f = _bounds(schema, integer=True)
        lo, hi = math.ceil(lo_f), math.floor(hi_f)
        mult = schema.get("multipleOf")
        if isinstance(mult, int) and mult > 0:
            first = math.ceil(lo / mult)
            last = math.floor(hi / mult)
            if last >= first:
                return (first + h % (last - first + 1)) * mult
        if hi < lo:
            return lo
        return lo + h % (hi - lo + 1)
    if typ == "number":
        lo_f, hi_f = _bounds(schema, integer=False)
        if hi_f <= lo_f:
            return lo_f
        frac = (h % 10_001) / 10_000
        value = round(lo_f + frac * (hi_f - lo_f), 2)
        return min(max(value, lo_f), hi_f)
    if typ == "boolean":
        return bool(h & 1)
    if typ == "null":
        return None
    # string
    text = f"reasoning {h % 10**8:08d}"
    min_len = int(schema.get("minLength", 0))
    max_len = schema.get("maxLength")
    if len(text) < min_len:
        text = text + "x" * (min_len - len(text))
    if isinstance(max_len, int) and len(text) > max_len:
        text = text[:max_len]
    return text


def _bounds(schema: dict[str, Any], *, integer: bool) -> tuple[float, float]:
    step = 1 if integer else 0.01
    lo = schema.get("minimum")
    hi = schema.get("maximum")
    ex_lo = schema.get("exclusiveMinimum")
    ex_hi = schema.get("exclusiveMaximum")
    if isinstance(ex_lo, int | float) and not isinstance(ex_lo, bool):
        lo = ex_lo + step if lo is None else max(lo, ex_lo + step)
    if isinstance(ex_hi, int | float) and not isinstance(ex_hi, bool):
        hi = ex_hi - step if hi is None else min(hi, ex_hi - step)
    if hi is None:
        hi = 100 if lo is None else lo + 100
    if lo is None:
        lo = hi - 100
    return float(lo), float(hi)
