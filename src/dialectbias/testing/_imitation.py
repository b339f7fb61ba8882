"""The real servers the test server can imitate (``--imitate``, issue 24): what each says of itself on
``GET /v1/models`` and ``GET /props``, and how each refuses a prompt longer than its context (``--context``).

Shapes copied from the servers' source:

- ``vllm``: `vllm/entrypoints/openai/protocol.py` `ModelCard` (``owned_by: "vllm"``, ``max_model_len``); a
  prompt plus ``max_tokens`` over ``max_model_len`` is a 400 "This model's maximum context length is …".
- ``llamacpp`` (llama.cpp's C++ server, `tools/server`): ``owned_by: "llamacpp"`` with a ``meta`` holding
  ``n_ctx_train``; ``GET /props`` has ``default_generation_settings.n_ctx`` (one slot's context) and
  ``total_slots`` (``--parallel``); a prompt of ``n_ctx`` tokens or more is a 400 "request (N tokens) exceeds
  the available context size (M tokens)" (``exceed_context_size_error``).
- ``llama-cpp-python`` (`llama_cpp/server/app.py`): ``owned_by: "me"``, ``permissions: []``, no ``/props``; a
  prompt plus ``max_tokens`` over ``n_ctx`` is a 400 in OpenAI's words (``context_length_exceeded``).

Each also counts tokens on request (`tokenize_answer`), checked against the servers' source: vLLM's
``POST /tokenize`` (`vllm/entrypoints/serve/tokenize/protocol.py`: ``{"model", "messages",
"add_generation_prompt"}`` → ``{"count", "max_model_len", "tokens"}``, the chat template applied), llama.cpp's
``POST /tokenize`` (``{"content"}`` → ``{"tokens": [...]}``, the text alone) and llama-cpp-python's
``POST /extras/tokenize/count`` (``{"input"}`` → ``{"count"}``, the text alone).

Tokens are the test server's own count (`_wire.tokens`: one per 4 characters), the same in ``usage``, in the
context refusals and on the tokenize routes."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web

from dialectbias.testing._messages import all_text
from dialectbias.testing._wire import error_response, json_response, tokens

Imitated = Literal["vllm", "llamacpp", "llama-cpp-python"]
IMITATED: tuple[str, ...] = ("vllm", "llamacpp", "llama-cpp-python")
#: the context an imitated server serves when `--context` is not given
DEFAULT_CONTEXT = 8192
#: the one model an imitated server lists (llama.cpp names it after its file; a lone entry is taken for any name)
IMITATED_MODEL = "smollm2-135m-instruct"


def models_answer(imitate: str, context: int | None) -> dict[str, Any]:
    """`GET /v1/models` as the imitated server answers it."""
    window = context or DEFAULT_CONTEXT
    if imitate == "vllm":
        entry: dict[str, Any] = {"id": IMITATED_MODEL, "object": "model", "created": 0, "owned_by": "vllm",
                                 "root": IMITATED_MODEL, "parent": None, "max_model_len": window, "permission": []}
    elif imitate == "llamacpp":
        entry = {"id": IMITATED_MODEL + ".gguf", "object": "model", "created": 0, "owned_by": "llamacpp",
                 "meta": {"vocab_type": 2, "n_vocab": 49152, "n_ctx_train": 8192, "n_embd": 576,
                          "n_params": 134515008, "size": 90000000}}
    else:
        entry = {"id": IMITATED_MODEL, "object": "model", "owned_by": "me", "permissions": []}
    return {"object": "list", "data": [entry]}


def props_answer(context: int | None, slots: int | None) -> dict[str, Any]:
    """llama.cpp's `GET /props` (the fields a client reads)."""
    return {"default_generation_settings": {"n_ctx": context or DEFAULT_CONTEXT, "params": {"n_predict": -1}},
            "total_slots": slots or 1, "model_path": "/models/" + IMITATED_MODEL + ".gguf",
            "modalities": {"vision": False, "audio": False}}


def context_refusal(imitate: str | None, context: int | None, prompt_tokens: int,
                    max_tokens: Any) -> web.Response | None:
    """The 400 an imitated server with a `context` answers to a prompt that does not fit; None when it fits
    (or nothing is imitated)."""
    if imitate is None or context is None:
        return None
    completion = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 0
    if imitate == "llamacpp":
        if prompt_tokens < context:
            return None
        return error_response(400, f"request ({prompt_tokens} tokens) exceeds the available context size "
                              f"({context} tokens), try increasing it", "exceed_context_size_error")
    if prompt_tokens + completion <= context:
        return None
    return error_response(400, f"This model's maximum context length is {context} tokens. However, you "
                          f"requested {prompt_tokens + completion} tokens ({prompt_tokens} in the messages, "
                          f"{completion} in the completion). Please reduce the length of the messages or "
                          "completion.", "invalid_request_error", "context_length_exceeded")


def tokenize_answer(imitate: str | None, context: int | None, path: str, body: Any) -> web.Response | None:
    """The imitated server's answer on its tokenize route (`path`): the tokens of the prompt it would count as
    `usage.prompt_tokens`; None when the imitated server has no such route (a 404)."""
    if not isinstance(body, dict):
        return None
    if imitate == "vllm" and path == "/tokenize" and isinstance(body.get("messages"), list):
        count = tokens(all_text(body["messages"]))
        return json_response({"count": count, "max_model_len": context or DEFAULT_CONTEXT, "tokens": list(range(count)),
                              "token_strs": None})
    if imitate == "llamacpp" and path == "/tokenize" and isinstance(body.get("content"), str):
        return json_response({"tokens": list(range(tokens(body["content"])))})
    if imitate == "llama-cpp-python" and path == "/extras/tokenize/count" and isinstance(body.get("input"), str):
        return json_response({"count": tokens(body["input"])})
    return None


__all__ = ["IMITATED", "Imitated", "context_refusal", "models_answer", "props_answer", "tokenize_answer"]
