"""Know the server (issue 24 item 1): an unsupported `response_format` stops the model at the first refusal
with one message naming the setting to use (never retried); `server: llamacpp` sends a grammar-safe schema
(string bounds ≤ 1000, no numeric ranges) in JSON mode and every judgment is scored; `GET /v1/models` gives
the context window. Through the CLI against the test server imitating llama-cpp-python and vLLM.

qa_bias, 3 items × 2 dialects × 2 models: 12 judge requests."""

from __future__ import annotations

import asyncio
from typing import Any

from dialectbias.judges import load_rubric
from dialectbias.providers._openai import OpenAIModel, OpenAIModelConfig
from dialectbias.providers._server import (
    GRAMMAR_MAX_STRING,
    context_window,
    llamacpp_meta,
    props_context,
    sent_schema,
)

ADVICE = "the server does not take `structured_output: json_schema`"


def _judge_bodies(server: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests() if r["body"]["model"] == "judge-model"]


def _max_lengths(node: Any) -> list[int]:
    if isinstance(node, dict):
        own = [node["maxLength"]] if "maxLength" in node else []
        return own + [n for v in node.values() for n in _max_lengths(v)]
    return [n for v in node for n in _max_lengths(v)] if isinstance(node, list) else []


def test_llamacpp_refusing_json_schema_stops_the_judge_at_once_then_json_object_scores_all(
        qa_server: Any, qa_project: Any, cli: Any, qa: Any) -> None:
    qa_server.set_faults([{"kind": "llamacpp_json_schema"}])
    project = qa_project(qa_server.base_url, n_items=3, judge={"max_concurrency": 1})
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 1, ran.output
    assert "Traceback" not in ran.output
    judge_calls = _judge_bodies(qa_server)
    assert len(judge_calls) == 1  # the first refusal stops the model: no retry, no other request
    assert judge_calls[0]["response_format"]["type"] == "json_schema"
    assert ran.output.count(ADVICE) == 1, ran.output
    assert "model 'judge-1'" in ran.output and "`structured_output: json_object` with `server: llamacpp`" \
        in ran.output and "HTTP 500" in ran.output
    generated = qa_server.stats()["chat_by_model"]
    assert generated.get("model-a") == 9 and generated.get("model-b") == 9  # 3 items × 3 variants

    qa_server.reset_stats()
    judge = {**project.config["judges"][0], "structured_output": "json_object", "server": "llamacpp"}
    project.rewrite(judges=[judge])
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 0, ran.output
    stats = qa_server.stats()["chat_by_model"]
    assert "model-a" not in stats and "model-b" not in stats  # the models' answers were kept
    bodies = _judge_bodies(qa_server)
    assert len(bodies) == 12
    for body in bodies:
        fmt = body["response_format"]
        assert fmt["type"] == "json_object"
        assert max(_max_lengths(fmt["schema"])) == GRAMMAR_MAX_STRING  # the rubric's 1500 capped
        assert "maximum" not in str(fmt["schema"]) and "minimum" not in str(fmt["schema"])
    row = {(r["stage"], r["model"]): r for r in qa.parse_table(ran.stdout)}[("judge", "judge-1")]
    assert (row["parse failed"], row["invalid values"]) == ("0", "0")
    assert "judge judge-1: 12 judgments · 0 unscored (parse failed) · " in ran.stdout  # every one scored


def test_without_the_hint_json_object_sends_the_full_schema_and_is_told_to_set_the_hint(
        qa_server: Any, qa_project: Any, cli: Any) -> None:
    """The control: what the hint prevents (a `maxLength` over 1000 makes a grammar llama.cpp cannot build;
    the imitation answers 500 saying so where the real server dies)."""
    qa_server.set_faults([{"kind": "llamacpp_json_schema"}])
    project = qa_project(qa_server.base_url, n_items=1, judge={"structured_output": "json_object",
                                                                "max_retries": 0})
    ran = cli("run", project.yaml_path, "--no-progress")
    bodies = _judge_bodies(qa_server)
    assert bodies and max(_max_lengths(bodies[0]["response_format"]["schema"])) == 1500
    assert ran.exit_code == 1 and "HTTP 500" in ran.output
    assert "could not build a grammar" in ran.output and "set `server: llamacpp` on this model" in ran.output
    assert len(bodies) <= 4  # never retried


def test_vllm_400_for_json_schema_is_a_config_error_never_retried(
        qa_server: Any, qa_project: Any, cli: Any) -> None:
    qa_server.set_faults([{"kind": "vllm_json_schema"}])
    project = qa_project(qa_server.base_url, n_items=3)  # 4 judge requests in flight at most
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 1, ran.output
    assert 1 <= len(_judge_bodies(qa_server)) <= 4  # one each for the requests already in flight
    assert ran.output.count(ADVICE) == 1 and "HTTP 400" in ran.output and "guided decoding" in ran.output
    assert "`structured_output: json_object`" in ran.output


def test_a_context_length_400_is_not_taken_for_a_refused_response_format() -> None:
    from dialectbias.providers._server import refuses_response_format

    assert not refuses_response_format(400, "This model's maximum context length is 2048 tokens. However, "
                                            "you requested 2100 tokens")
    assert not refuses_response_format(500, "The server had an error")
    assert not refuses_response_format(429, "rate limit for response_format requests")
    assert refuses_response_format(500, "response_format.type: Input should be 'text' or 'json_object'")
    assert refuses_response_format(400, "The provided JSON schema contains features not supported by xgrammar.")


def test_the_default_rubric_sent_grammar_safe() -> None:
    schema = load_rubric("rlaif").json_schema()
    assert max(_max_lengths(schema)) == 1500  # the rubric itself is unchanged …
    safe = sent_schema(schema, "llamacpp")
    assert max(_max_lengths(safe)) == GRAMMAR_MAX_STRING  # … what is sent to llama.cpp is capped
    assert safe["required"] == schema["required"] and list(safe["properties"]) == list(schema["properties"])
    for name, prop in safe["properties"].items():
        full = schema["properties"][name]
        assert prop["type"] == full["type"]
        assert not {"minimum", "maximum"} & set(prop), name
        assert {k: v for k, v in full.items() if k not in ("minimum", "maximum", "maxLength")} == \
            {k: v for k, v in prop.items() if k != "maxLength"}
    assert schema["properties"]["dialect_comprehension"]["maximum"] == 5  # not modified in place
    assert sent_schema(schema, "ollama") == safe  # Ollama builds a grammar with llama.cpp's converter
    for server in ("vllm", "openai", "other"):
        assert sent_schema(schema, server) is schema


def test_the_server_hint_is_in_the_identity_only_where_it_changes_what_is_sent() -> None:
    def identity(**extra: Any) -> dict[str, Any]:
        return OpenAIModelConfig(id="j", model="m", base_url="http://x/v1", **extra).identity()

    plain = identity()
    assert "server" not in plain and "schema_limits" not in plain
    assert identity(server="vllm") == identity(server="other") == plain
    llama = identity(server="llamacpp", structured_output="json_object")
    assert llama["schema_limits"] == {"max_string_length": 1000, "numeric_ranges": False}
    assert llama != identity(structured_output="json_object")
    assert "schema_limits" not in identity(server="llamacpp", structured_output="none")


def test_the_context_window_is_read_from_v1_models(qa_server: Any) -> None:
    assert context_window({"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 2048}]},
                          "b") == 2048  # vLLM
    llama = {"data": [{"id": "smol.gguf", "meta": {"n_ctx_train": 8192, "n_vocab": 49152}}]}
    assert context_window(llama, "anything") is None  # trained with 8192, not necessarily served with it …
    assert llamacpp_meta(llama, "anything")  # … so /props is asked (one model served, whatever its name)
    assert props_context({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1}) == 2048
    assert props_context({"n_ctx": 4096}) == 4096 and props_context({"total_slots": 1}) is None
    assert context_window({"data": [{"id": "x", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}]}, "x") == 2048
    assert not llamacpp_meta({"data": [{"id": "a", "max_model_len": 4096}]}, "a")
    assert context_window({"data": [{"id": "gpt", "object": "model"}]}, "gpt") is None  # OpenAI, Ollama
    assert context_window({"error": "nope"}, "x") is None

    config = OpenAIModelConfig(id="m", model="test-model", base_url=qa_server.base_url)

    async def ask() -> tuple[int | None, int | None]:
        client = OpenAIModel(config)
        try:
            return await client.context_window(), await client.context_window()
        finally:
            await client.aclose()

    assert asyncio.run(ask()) == (8192, 8192)
    assert qa_server.stats()["by_path"].get("/v1/models") == 1  # asked once per client


def test_a_prompt_only_judge_is_warned_about_once(qa_server: Any, qa_project: Any, cli: Any) -> None:
    """`structured_output: none` is allowed (some servers take no response_format), but the run says what it
    costs: nothing constrains the judge's answers to the rubric's format."""
    project = qa_project(qa_server.base_url, n_items=1, judge={"structured_output": "none"})
    ran = cli("run", project.yaml_path, "--no-progress")
    assert ran.exit_code == 4, ran.output  # the test server's judge writes no JSON unless asked: all unscored
    assert "response_format" not in _judge_bodies(qa_server)[0]
    assert ran.output.count("`structured_output: none`: the rubric's JSON format is asked in the prompt only") == 1
    assert "judge 'judge-1'" in ran.output
    schema = qa_project(qa_server.base_url, n_items=1)
    assert "prompt only" not in cli("run", schema.yaml_path, "--no-progress").output
