"""Experiment files: validation, path resolution and errors that name the file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialectbias.api import load_experiment
from dialectbias.errors import ConfigError
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.tasks.qa_bias import QABiasOptions

EXAMPLE = """\
name: bn-qa
task: qa_bias
data: data/items.jsonl
variants: [standard, chittagong, sylhet]
models:
  - id: llama-8b
    provider: openai
    model: meta-llama/Llama-3.1-8B-Instruct
    base_url: http://127.0.0.1:8000/v1
    api_key_env: VLLM_API_KEY
    max_concurrency: 64
  - id: gpt-4o-mini
    provider: openai
    model: gpt-4o-mini
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
    max_concurrency: 16
    rpm: 500
judges:
  - id: gpt-4o
    provider: openai
    model: gpt-4o
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
    role: primary
  - id: qwen-judge
    provider: openai
    model: Qwen/Qwen2.5-72B-Instruct
    base_url: http://127.0.0.1:8001/v1
    role: secondary
options:
  max_tokens: 256
"""


def write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_experiment(path)
    return str(info.value)


def test_example_file_validates_models_and_judges(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, EXAMPLE))
    assert [m.id for m in exp.models] == ["llama-8b", "gpt-4o-mini"]
    llama = exp.models[0]
    assert isinstance(llama, OpenAIModelConfig)
    assert (llama.base_url, llama.api_key_env, llama.max_concurrency) == (
        "http://127.0.0.1:8000/v1", "VLLM_API_KEY", 64)
    assert exp.models[1].rpm == 500
    assert [(j.id, j.role) for j in exp.judges] == [("gpt-4o", "primary"), ("qwen-judge", "secondary")]
    assert exp.primary_judge is not None and exp.primary_judge.id == "gpt-4o"
    assert exp.options == {"max_tokens": 256}


def test_store_defaults_to_name_sqlite_next_to_the_file(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    path = write(tmp_path / "sub", EXAMPLE)
    monkeypatch.chdir(tmp_path)  # not the file's directory
    exp = load_experiment(path)
    assert exp.store_path == tmp_path / "sub" / "bn-qa.sqlite"


def test_paths_are_relative_to_the_file_not_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "proj").mkdir()
    write(tmp_path / "proj", EXAMPLE + "store: runs/custom.sqlite\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    exp = load_experiment(Path("..") / "proj" / "exp.yaml")
    assert exp.store_path == tmp_path / "proj" / "runs" / "custom.sqlite"
    assert exp.resolve(exp.data) == tmp_path / "proj" / "data" / "items.jsonl"


def test_absolute_store_path_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "abs" / "s.sqlite"
    exp = load_experiment(write(tmp_path, EXAMPLE + f"store: {target}\n"))
    assert exp.store_path == target


def test_unknown_top_level_key_names_file_key_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("task: qa_bias\n", "task: qa_bias\nmodle: x\n"))
    message = error_of(path)
    assert str(path) in message
    assert "modle (line 3)" in message
    assert "unknown key" in message


def test_unknown_model_key_names_file_key_path_and_line(tmp_path: Path) -> None:
    text = EXAMPLE.replace("    max_concurrency: 16\n", "    max_concurency: 16\n")
    line = text.splitlines().index("    max_concurency: 16") + 1
    message = error_of(write(tmp_path, text))
    assert str(tmp_path / "exp.yaml") in message
    assert f"models.1.max_concurency (line {line})" in message


def test_unknown_model_key_is_reported_once(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, EXAMPLE.replace("max_concurrency: 16", "max_concurency: 16")))
    assert message.count("max_concurency") == 1


def test_unknown_provider_is_a_config_error_naming_it(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, EXAMPLE.replace("provider: openai", "provider: opanai", 1)))
    assert "unknown provider 'opanai'" in message
    assert "openai" in message.split("expected", 1)[1]


def test_unknown_provider_error_names_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("provider: openai", "provider: opanai", 1))
    message = error_of(path)
    assert str(path) in message
    assert "models.0.provider" in message


def test_unknown_task_is_a_config_error_naming_it(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, EXAMPLE.replace("task: qa_bias", "task: qa_bais")))
    assert "unknown task 'qa_bais'" in message
    assert "qa_bias" in message.split("expected", 1)[1]


def test_unknown_task_error_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("task: qa_bias", "task: qa_bais"))
    assert str(path) in error_of(path)


def test_duplicate_model_ids_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("id: gpt-4o-mini", "id: llama-8b"))
    message = error_of(path)
    assert str(path) in message
    assert "duplicate model id(s): llama-8b" in message
    assert "models (line 5)" in message


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\ntask: [\n")
    message = error_of(path)
    assert message.startswith(f"{path}:3:1: not valid YAML")


def test_non_utf8_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: x\ntask: qa_bias\n# café\n".encode("latin-1"))
    message = error_of(path)
    assert message.startswith(f"{path}: not UTF-8 text")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert error_of(path) == f"{path}: experiment file not found"


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "- just\n- a list\n")
    assert error_of(path).startswith(f"{path}: expected a mapping")


def test_task_options_are_validated(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("max_tokens: 256", "max_tokenz: 256"))
    message = error_of(path)
    assert str(path) in message
    assert "options.max_tokenz" in message


def test_model_cost_from_prices_per_million_tokens() -> None:
    from dialectbias.providers._openai import OpenAIModelConfig

    priced = OpenAIModelConfig(id="m", model="m", base_url="http://127.0.0.1:1/v1", price_in_per_mtok=0.3,
                               price_out_per_mtok=2.5)
    # 2,000,000 × 0.3 / 1e6 + 400,000 × 2.5 / 1e6 = 0.6 + 1.0
    assert priced.cost(2_000_000, 400_000) == pytest.approx(1.6)
    assert OpenAIModelConfig(id="m", model="m", base_url="http://127.0.0.1:1/v1").cost(10, 10) is None


# -- errors that name the line, once (issue 7.5) -----------------------------------------------------------


def line_of(text: str, needle: str, start: int = 0) -> int:
    """1-based number of the first line containing `needle` at or after line `start`."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if i > start and needle in line)


def test_a_provider_typo_is_reported_once_per_entry_with_its_line(tmp_path: Path) -> None:
    text = EXAMPLE.replace("provider: openai", "provider: opnai", 1)
    path = write(tmp_path, text)
    assert error_of(path) == "\n".join([
        f"{path}: invalid experiment file",
        f"  - models.0.provider (line {line_of(text, 'opnai')}): unknown provider 'opnai' (did you mean 'openai'?); "
        "expected one of: hf, openai, vllm"])


def test_a_missing_provider_is_named_with_its_line(tmp_path: Path) -> None:
    text = EXAMPLE.replace("    provider: openai\n", "", 1)
    path = write(tmp_path, text)
    assert error_of(path).splitlines()[1:] == [
        f"  - models.0.provider (line {line_of(text, '- id: llama-8b')}): missing (one of: hf, openai, vllm)"]


def test_an_options_typo_names_the_line_and_the_known_options(tmp_path: Path) -> None:
    text = EXAMPLE.replace("max_tokens: 256", "max_tokns: 256")
    path = write(tmp_path, text)
    assert error_of(path) == "\n".join([
        f"{path}: invalid experiment file",
        f"  - options.max_tokns (line {line_of(text, 'max_tokns')}): unknown key (did you mean 'max_tokens'? "
        f"known: {', '.join(QABiasOptions.model_fields)})"])


def test_an_options_value_error_names_the_line(tmp_path: Path) -> None:
    text = EXAMPLE.replace("max_tokens: 256", "max_tokens: 0")
    path = write(tmp_path, text)
    assert error_of(path).splitlines()[1:] == [
        f"  - options.max_tokens (line {line_of(text, 'max_tokens: 0')}): Input should be greater than or equal to 1"]


def test_a_variants_typo_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, EXAMPLE.replace("variants: [standard, chittagong, sylhet]",
                                           "variants:\n  - standard\n  - chitagong\n  - sylhet"))
    assert error_of(path) == (
        f"{path}:6: variants: unknown variant 'chitagong' (did you mean 'chittagong'? add it to the registry with "
        "`dialects: {<language>: [chitagong]}` in the experiment file)")


def test_input_limits_default_and_must_be_ordered(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, EXAMPLE))
    assert (exp.limits.warn_field_chars, exp.limits.max_field_chars) == (20_000, 200_000)
    text = EXAMPLE + "limits: {warn_field_chars: 500, max_field_chars: 100}\n"
    path = write(tmp_path, text)
    assert error_of(path).splitlines()[1:] == [
        f"  - limits (line {line_of(text, 'limits:')}): Value error, warn_field_chars (500) must not exceed "
        "max_field_chars (100)"]


VQA_TOP_LEVEL = """\
name: vqa-top
task: vqa
data: items.jsonl
strategies: [zero_shot, cot]
vqa_parse: index_first
models:
  - {id: m, provider: openai, model: m, base_url: "http://127.0.0.1:9/v1"}
"""


def _vqa_items(tmp_path: Path) -> None:
    item = ('{"id": "food_1", "domain": "food", "variants": {"standard": {"question": "q", '
            '"options": ["a", "b", "c", "d"], "answer_index": 1}}}\n')
    (tmp_path / "items.jsonl").write_text(item, encoding="utf-8")


def test_vqa_contract_keys_at_top_level_reach_the_task(tmp_path: Path) -> None:
    """The vqa/caption contract names `strategies:` and `vqa_parse:` as experiment keys: the top level works
    like `options:`."""
    from dialectbias.tasks import load_task

    _vqa_items(tmp_path)
    (tmp_path / "exp.yaml").write_text(VQA_TOP_LEVEL, encoding="utf-8")
    exp = load_experiment(tmp_path / "exp.yaml")
    task = load_task(exp)
    assert task.options.strategies == ["zero_shot", "cot"]
    assert task.options.vqa_parse == "index_first"


def test_a_contract_key_in_both_places_is_an_error(tmp_path: Path) -> None:
    _vqa_items(tmp_path)
    text = VQA_TOP_LEVEL + "options:\n  strategies: [few_shot]\n"
    (tmp_path / "exp.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="strategies: given both at the top level and under options"):
        load_experiment(tmp_path / "exp.yaml")
