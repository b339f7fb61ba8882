"""What an OpenAI-compatible server can take (issue 24 item 1, "Know the server"): the `server:` hint, the
grammar-safe schema sent to llama.cpp, the refusal of an unsupported `response_format`, and what the server
says of itself (`ServerProfile`: its kind from `GET /v1/models` `owned_by`, its context window, llama.cpp's
parallel slots from `GET /props`).

llama.cpp turns a JSON schema into a GBNF grammar with one rule per allowed character of a bounded string:
a `maxLength` of ~1200 or more makes a grammar it cannot build, and the server process dies (measured with
llama-cpp-python 0.3.x, issue 24). Its grammar enforces keys and types, not numeric ranges. So for
`server: llamacpp` the sent schema caps string lengths at `GRAMMAR_MAX_STRING` and drops numeric ranges;
the answer is still validated against the rubric's full model (ranges included) after it arrives, and a
value out of range is counted as "invalid values"."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

#: the OpenAI-compatible server behind `base_url`, as the config says (`other`: nothing assumed)
ServerKind = Literal["vllm", "llamacpp", "ollama", "openai", "other"]
#: a server's route that counts a request's tokens (`OpenAIModel.server_tokens`): vLLM's `POST /tokenize` (the
#: messages, chat template applied: exact), llama.cpp's `POST /tokenize` and llama-cpp-python's
#: `POST /extras/tokenize/count` (the text alone: a lower bound)
TokenizeRoute = Literal["vllm", "llamacpp", "llama-cpp-python"]
#: the longest `maxLength`/`minLength` sent to a grammar-building server (llama.cpp crashes from ~1200)
GRAMMAR_MAX_STRING = 1000
#: schema keys a grammar-building server cannot enforce (numeric ranges): left out of the sent schema
_NUMERIC_RANGE_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
#: servers whose structured output is a grammar built from the schema, with the limits above
#: (Ollama builds its grammar with llama.cpp's converter since 0.5; its docs, issue 24)
GRAMMAR_SERVERS: frozenset[str] = frozenset({"llamacpp", "ollama"})


def schema_limits(server: str) -> dict[str, Any] | None:
    """What the sent schema gives up on this server (None: the schema is sent as the rubric builds it). Part
    of the model's identity, so a cached answer follows the schema that was sent."""
    if server not in GRAMMAR_SERVERS:
        return None
    return {"max_string_length": GRAMMAR_MAX_STRING, "numeric_ranges": False}


def sent_schema(schema: dict[str, Any], server: str) -> dict[str, Any]:
    """The schema as sent to `server`: for a grammar-building server (llama.cpp) string bounds capped at
    `GRAMMAR_MAX_STRING` and numeric ranges removed; otherwise `schema` itself (never modified in place)."""
    if server not in GRAMMAR_SERVERS:
        return schema
    return _grammar_safe(schema)


def _grammar_safe(node: Any) -> Any:
    if isinstance(node, list):
        return [_grammar_safe(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NUMERIC_RANGE_KEYS and node.get("type") in ("integer", "number"):
            continue
        if key in ("maxLength", "minLength") and isinstance(value, int) and node.get("type") == "string":
            out[key] = min(value, GRAMMAR_MAX_STRING)
        elif key == "properties" and isinstance(value, dict):  # property names are not schema keywords
            out[key] = {name: _grammar_safe(sub) for name, sub in value.items()}
        else:
            out[key] = _grammar_safe(value)
    return out


#: an error body that says the request's structured-output field is what the server refused
_REFUSED_FIELD = re.compile(r"response_format|json_schema|guided_json|guided decoding|structured output|"
                            r"xgrammar|outlines|grammar", re.IGNORECASE)


def refuses_response_format(status: int, body_text: str) -> bool:
    """An HTTP error to a request that carried `response_format` is a refusal of that field (a configuration
    error, never retried) when it is a 4xx or a 5xx and its body names the field: llama-cpp-python answers
    500 `response_format.type: Input should be 'text' or 'json_object'`; vLLM and OpenAI answer 400 about
    `response_format`, `json_schema` or guided decoding. A 4xx about anything else (a prompt longer than
    the context) is not one."""
    return status >= 400 and status != 429 and bool(_REFUSED_FIELD.search(body_text))


def refusal_advice(model_id: str, mode: str, server: str, body_text: str = "") -> str:
    """What to change after the server refused `structured_output: <mode>` (its error body `body_text`: a
    grammar it could not build from the schema asks for the grammar-safe one)."""
    if "grammar" in body_text.lower() and server not in GRAMMAR_SERVERS:
        return (f"model {model_id!r}: the server could not build a grammar from the schema sent with "
                f"`structured_output: {mode}`; set `server: llamacpp` on this model (a grammar-safe schema: "
                f"string lengths capped at {GRAMMAR_MAX_STRING}, numeric ranges checked after the answer)")
    if mode == "json_schema":
        instead = ("`structured_output: json_object` with `server: llamacpp` (JSON mode with a grammar-safe "
                   "schema)" if server in ("llamacpp", "other") else "`structured_output: json_object`")
    else:
        instead = "`structured_output: json_schema` if the server has it"
    return (f"model {model_id!r}: the server does not take `structured_output: {mode}`; set {instead} on "
            f"this model, or `structured_output: none` (the rubric's format is then asked in the prompt only, "
            f"and answers are more often unusable)")


def context_window(models: Any, model: str) -> int | None:
    """The context window `GET /v1/models` reports for `model`, where the server says: vLLM's
    `max_model_len` on each model entry, or `meta.n_ctx` (the context served, which some llama.cpp builds
    add). None when it does not say: OpenAI, Ollama and llama-cpp-python report none, and llama.cpp's
    `meta.n_ctx_train` is the context the model was trained with, not the one served (`-c`): see
    `llamacpp_meta` and `props_context`."""
    entry = _model_entry(models, model)
    if entry is None:
        return None
    meta = entry["meta"] if isinstance(entry.get("meta"), dict) else {}
    for value in (entry.get("max_model_len"), meta.get("n_ctx")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def llamacpp_meta(models: Any, model: str) -> bool:
    """Whether `GET /v1/models` is llama.cpp's (a `meta` with `n_ctx_train` on the model's entry): its
    served context is then asked of `GET /props`."""
    entry = _model_entry(models, model)
    return entry is not None and isinstance(entry.get("meta"), dict) and "n_ctx_train" in entry["meta"]


def props_context(props: Any) -> int | None:
    """The context of one slot as llama.cpp's `GET /props` reports it (`default_generation_settings.n_ctx`,
    else `n_ctx`)."""
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    for value in ((settings or {}).get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class ServerProfile(BaseModel):
    """What an OpenAI-compatible server says of itself (`ModelAPI.server_profile`, asked once per client):
    for the planner (slots, context window), the run's context-fit check and the advice on what to set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: the server kind in effect: the config's `server:` hint, else what the server says (`detected`), else
    #: "other"
    kind: ServerKind
    #: what `GET /v1/models` says the server is (`detect_kind`); None when it does not say
    detected: ServerKind | None = None
    #: the context window in tokens of one request (vLLM's `max_model_len`, llama.cpp's per-slot `n_ctx`)
    context_window: int | None = None
    #: requests the server answers at once (llama.cpp's `/props` `total_slots`); None when it does not say
    #: (vLLM batches as many as fit in its KV cache and exposes no number)
    slots: int | None = None
    #: the route that counts a request's tokens on this server, None when it has none (OpenAI, Ollama, other)
    tokenize: TokenizeRoute | None = None


#: `owned_by` values servers write on every model they list, each verified in the server's source: vLLM
#: (`vllm/entrypoints/openai/protocol.py`, `ModelCard.owned_by = "vllm"`), llama.cpp (`tools/server`,
#: `{"owned_by", "llamacpp"}`), Ollama (`openai/openai.go`: the model's namespace, "library" for the official
#: models) and OpenAI ("openai", "system"). llama-cpp-python answers `owned_by: "me"` with `permissions: []`.
_OWNED_BY: dict[str, ServerKind] = {"vllm": "vllm", "llamacpp": "llamacpp", "library": "ollama",
                                    "openai": "openai", "system": "openai", "openai-internal": "openai"}


def detect_kind(models: Any, model: str) -> ServerKind | None:
    """The server kind `GET /v1/models` reveals for `model`'s entry: its `owned_by` (`_OWNED_BY`), llama.cpp's
    `meta.n_ctx_train`, or llama-cpp-python's `owned_by: "me"` with a `permissions` list (its grammar is
    llama.cpp's, so it counts as `llamacpp`); None when the answer says nothing known."""
    entry = _model_entry(models, model)
    if entry is None:
        return None
    owner = entry.get("owned_by")
    if isinstance(owner, str) and owner in _OWNED_BY:
        return _OWNED_BY[owner]
    if llamacpp_meta(models, model) or (owner == "me" and isinstance(entry.get("permissions"), list)):
        return "llamacpp"
    return None


def props_slots(props: Any) -> int | None:
    """Requests llama.cpp's server answers at once, as `GET /props` reports them (`total_slots`, its
    `--parallel`)."""
    value = props.get("total_slots") if isinstance(props, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def schema_needs_hint(schema: dict[str, Any] | None, hint: str, profile: ServerProfile | None) -> bool:
    """Whether a request must not be sent as it is: no `server:` hint (`other`), the server says it builds a
    grammar from the schema (llama.cpp, Ollama) and the grammar-safe schema would differ from `schema`. The
    detected kind never changes what is sent (the model identity, hence every request id and cache key, is
    computed from the config before any server is asked, e.g. by `plan` with no server up): the model stops
    with `hint_advice` instead of crashing the server."""
    return (schema is not None and hint == "other" and profile is not None
            and profile.detected in GRAMMAR_SERVERS and sent_schema(schema, profile.detected) != schema)


def hint_advice(model_id: str, base_url: str, detected: str, mode: str = "json_object") -> str:
    """The one message for `schema_needs_hint`: what the server said it is and every setting to add at once
    (with `structured_output: json_schema`, also JSON mode: llama-cpp-python's server refuses json_schema,
    so a user who set only the hint would meet a second message)."""
    also = (" and `structured_output: json_object` (llama-cpp-python's server refuses json_schema; llama.cpp's "
            "own server takes either)" if mode == "json_schema" and detected == "llamacpp" else "")
    return (f"model {model_id!r}: the server at {base_url} says it is {detected} (GET /v1/models); it builds a "
            f"grammar from the JSON schema and cannot take this one (a string maxLength over "
            f"{GRAMMAR_MAX_STRING} crashes it, numeric ranges are not enforced); set `server: {detected}`{also} "
            f"on this model to send a grammar-safe schema (ranges are checked after the answer); nothing was sent")


def _model_entry(models: Any, model: str) -> dict[str, Any] | None:
    """`model`'s entry in a `GET /v1/models` answer; the only entry when the server serves one model under
    another name (llama.cpp names it after its file)."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    return next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
