"""qa_bias dialect-written answer instructions (Bengali paper §3.2) through the CLI with the test server, on
questions built from the real Vashantor test split: the prompts of a variant carry its instruction, the
report names each variant's instruction and provenance, editing one re-asks only that variant, and a
missing or broken template is an error naming the variant and the file."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.tasks.qa_bias._instructions import PACKAGED_DIR, package_templates, read_instruction
from shared_data import VASHANTOR, shared_path

N_ITEMS = 4
SYLHET_LINE = "তলর ফশ্নাটার উত্তর খাঁটি বাংলাত দেইন।"
STANDARD_LINE = "নিচের প্রশ্নটির উত্তর প্রমিত বাংলায় দিন।"
CHITTAGONG = """---
source: machine (translate, model mt-test)
variant: chittagong
note: made by a translate run; not checked by a speaker
---
চাটগাঁইয়া নির্দেশ এক: উত্তর প্রমিত বাংলায় দিন।
প্রশ্ন: {{ question }}
"""


def vashantor_items() -> list[dict[str, Any]]:
    """The first rows of the Vashantor test split whose standard side is the same in the Sylhet and
    Chittagong files and whose dialect side differs from it: id, standard, sylhet, chittagong."""
    folder = shared_path(*VASHANTOR, "Test", why="qa_bias items from Vashantor")
    sides = {}
    for dialect in ("Sylhet", "Chittagong"):
        with (folder / f"{dialect} Test Translation.csv").open(encoding="utf-8") as fh:
            sides[dialect.lower()] = list(csv.DictReader(fh))
    items = []
    for i, (syl, ctg) in enumerate(zip(sides["sylhet"], sides["chittagong"], strict=True)):
        std = syl["standard_text"].strip()
        if std != ctg["standard_text"].strip() or std in (syl["dialect_text"].strip(), ctg["dialect_text"].strip()):
            continue
        items.append({"id": f"v{i:03d}", "domain": "conversation", "question_type": "open",
                      "variants": {"standard": std, "sylhet": syl["dialect_text"].strip(),
                                   "chittagong": ctg["dialect_text"].strip()}})
        if len(items) == N_ITEMS:
            break
    assert len(items) == N_ITEMS
    return items


def project(qa: Any, tmp_path: Path, base_url: str, **options: Any) -> Any:
    p = qa.make_project(tmp_path / "exp", base_url, items=vashantor_items())
    if options:
        p.rewrite(options=options)
    return p


def generations(cli: Any, p: Any, out: Path) -> list[dict[str, Any]]:
    result = cli("export", p.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "generations.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["current"]]


def prompt_text(row: dict[str, Any]) -> str:
    messages = json.loads(row["rendered_prompt"])
    return "\n".join(m["content"] for m in messages)


def instructions_csv(out: Path) -> dict[str, dict[str, str]]:
    with (out / "qa_bias_instructions.csv").open(encoding="utf-8") as fh:
        return {r["variant"]: r for r in csv.DictReader(fh)}


@pytest.fixture
def per_variant(qa: Any, tmp_path: Path, qa_server: Any) -> Any:
    (tmp_path / "exp" / "instructions").mkdir(parents=True)
    (tmp_path / "exp" / "instructions" / "chittagong.j2").write_text(CHITTAGONG, encoding="utf-8")
    return project(qa, tmp_path, qa_server.base_url, instructions="per_variant", instructions_dir="instructions")


def test_each_variants_prompts_carry_its_instruction(qa: Any, cli: Any, per_variant: Any, tmp_path: Path) -> None:
    result = cli("run", per_variant.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    rows = generations(cli, per_variant, tmp_path / "export")
    items = {i["id"]: i for i in vashantor_items()}
    assert len(rows) == len(qa.MODELS) * N_ITEMS * 3
    for row in rows:
        text = prompt_text(row)
        question = items[row["item_id"]]["variants"][row["variant"]]
        if row["variant"] == "sylhet":  # the paper's Sylhet prompt: instruction, question, "only the answer"
            assert text == f"{SYLHET_LINE}\nপ্রশ্না: {question}\n(খালি ফশ্নাটার উত্তোর দিবা।)"
            assert row["prompt_template"] == f"{PACKAGED_DIR}/sylhet"
        elif row["variant"] == "chittagong":
            assert text == f"চাটগাঁইয়া নির্দেশ এক: উত্তর প্রমিত বাংলায় দিন।\nপ্রশ্ন: {question}"
            assert "---" not in text and "source" not in text  # the front matter is never sent
            assert row["prompt_template"] == "instructions/chittagong.j2"
        else:
            assert text.startswith(STANDARD_LINE) and text.endswith(f"প্রশ্ন: {question}")
            assert row["prompt_template"] == "qa_bias/answer"


def test_report_names_each_variants_instruction_and_provenance(qa: Any, cli: Any, per_variant: Any,
                                                               tmp_path: Path) -> None:
    assert cli("run", per_variant.yaml_path, "--no-progress").exit_code == 0
    out = tmp_path / "report"
    result = cli("report", per_variant.yaml_path, "--out", out)
    assert result.exit_code == 0, result.output
    table = instructions_csv(out)
    assert list(table) == ["standard", "chittagong", "sylhet"]
    assert table["sylhet"]["source"].startswith("paper §3.2")
    assert table["chittagong"]["source"] == "machine (translate, model mt-test)"
    assert table["chittagong"]["note"] == "made by a translate run; not checked by a speaker"
    assert table["standard"]["source"].startswith("package")
    assert {r["instructions"] for r in table.values()} == {"per_variant"}
    assert {int(r["prompts"]) for r in table.values()} == {len(qa.MODELS) * N_ITEMS}
    body = CHITTAGONG.split("---\n", 2)[2]
    assert table["chittagong"]["sha256"] == hashlib.sha256(body.encode()).hexdigest()
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "Answer instructions" in html and "machine (translate, model mt-test)" in html
    assert "instructions/chittagong.j2" in html and "paper §3.2" in html


def test_editing_one_instruction_re_asks_only_that_variant(qa: Any, cli: Any, per_variant: Any, qa_server: Any,
                                                           tmp_path: Path) -> None:
    assert cli("run", per_variant.yaml_path, "--no-progress").exit_code == 0
    before = {(r["model"], r["item_id"], r["variant"]): r for r in generations(cli, per_variant, tmp_path / "e1")}
    # same size, same mtime would not do: the content is what is fingerprinted
    path = per_variant.dir / "instructions" / "chittagong.j2"
    stat = path.stat()
    path.write_text(CHITTAGONG.replace("নির্দেশ এক", "নির্দেশ দুই"), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    qa_server.reset_stats()
    result = cli("run", per_variant.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    # the Chittagong answers are asked again, then judged again (2 models × 4 items each); nothing else
    assert qa_server.stats()["chat_by_model"] == {**dict.fromkeys(qa.MODELS, N_ITEMS), "judge-model": 2 * N_ITEMS}
    after = {(r["model"], r["item_id"], r["variant"]): r for r in generations(cli, per_variant, tmp_path / "e2")}
    assert before.keys() == after.keys()
    for key, row in after.items():
        same = row["request_id"] == before[key]["request_id"]
        assert same == (key[2] != "chittagong"), key
        if key[2] == "chittagong":
            assert "নির্দেশ দুই" in prompt_text(row)
    assert qa.JUDGE  # the judge of conftest's project judged them


def test_standard_default_asks_every_variant_in_standard_bengali(qa: Any, cli: Any, qa_server: Any,
                                                                 tmp_path: Path) -> None:
    p = project(qa, tmp_path, qa_server.base_url)
    assert cli("run", p.yaml_path, "--no-progress").exit_code == 0
    items = {i["id"]: i for i in vashantor_items()}
    for row in generations(cli, p, tmp_path / "export"):
        question = items[row["item_id"]]["variants"][row["variant"]]
        assert prompt_text(row) == qa.answer_prompt(question, row["variant"])  # the prompts before this option
    out = tmp_path / "report"
    assert cli("report", p.yaml_path, "--out", out).exit_code == 0
    table = instructions_csv(out)
    assert {r["template"] for r in table.values()} == {"qa_bias/answer"}
    assert {r["instructions"] for r in table.values()} == {"standard"}
    assert "not the paper" in (out / "index.html").read_text(encoding="utf-8")


def test_missing_instruction_names_the_variant_and_the_file(qa: Any, cli: Any, qa_server: Any, tmp_path: Path) -> None:
    (tmp_path / "exp" / "instructions").mkdir(parents=True)
    p = project(qa, tmp_path, qa_server.base_url, instructions="per_variant", instructions_dir="instructions")
    result = cli("run", p.yaml_path, "--no-progress")
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "variant 'chittagong' has no instruction template" in text
    assert str(p.dir / "instructions" / "chittagong.j2") in "".join(result.output.split())
    assert "Traceback" not in result.output
    assert qa_server.stats()["chat_requests"] == 0  # refused before any request
    # without a folder: the option to set is named
    p.rewrite(options={"instructions": "per_variant"})
    result = cli("run", p.yaml_path, "--no-progress")
    text = " ".join(result.output.split())
    assert result.exit_code != 0 and "<instructions_dir>/chittagong.j2" in text
    assert "set options.instructions_dir" in text


@pytest.mark.parametrize(("content", "expected"), [
    ("---\nsource: written by me\n---\n{{ question }}", "is not one of"),
    ("---\nsource: user\nvariant: sylhet\n---\n{{ question }}", "says `variant: sylhet`"),
    ("---\nsource: user\ncolour: red\n---\n{{ question }}", "front matter key 'colour'"),
    ("---\nsource: user\n{{ question }}", "never closed"),
    ("---\nsource: user\n---\nশুধু উত্তর দিন।", "never uses {{ question }}"),
    ("---\nsource: user\n---\n\n{% if %}{{ question }}", "chittagong.j2:5"),
])
def test_broken_instruction_file_is_named(qa: Any, cli: Any, qa_server: Any, tmp_path: Path, content: str,
                                          expected: str) -> None:
    (tmp_path / "exp" / "instructions").mkdir(parents=True)
    (tmp_path / "exp" / "instructions" / "chittagong.j2").write_text(content, encoding="utf-8")
    p = project(qa, tmp_path, qa_server.base_url, instructions="per_variant", instructions_dir="instructions")
    result = cli("run", p.yaml_path, "--no-progress")
    assert result.exit_code != 0
    flat = "".join(result.output.split())
    assert "chittagong.j2" in flat and "".join(expected.split()) in flat, result.output
    assert "Traceback" not in result.output


def test_instructions_dir_with_standard_mode_is_refused(qa: Any, cli: Any, qa_server: Any, tmp_path: Path) -> None:
    (tmp_path / "exp" / "instructions").mkdir(parents=True)
    p = project(qa, tmp_path, qa_server.base_url, instructions_dir="instructions")
    result = cli("run", p.yaml_path, "--no-progress")
    flat = " ".join(result.output.split())
    assert result.exit_code != 0 and "instructions: standard" in flat and "would ignore it" in flat


def test_every_packaged_instruction_states_its_provenance() -> None:
    files = sorted((package_templates() / PACKAGED_DIR).glob("*.j2"))
    assert [f.stem for f in files] == ["sylhet"]  # only what the paper prints; no invented dialect text
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert text.startswith("---\n")
        instruction = read_instruction(f, f.stem, f.stem, "missing")
        assert instruction.source.startswith("paper §3.2")
        assert "{{ question }}" in instruction.body


@pytest.fixture(scope="module")
def translate_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:translate_responder") as srv:
        yield srv


def test_machine_made_instructions_recipe_end_to_end(qa: Any, cli: Any, translate_server: Any, tmp_path: Path) -> None:
    """build qa-instruction-items → a translate run → export --items → build qa-instructions → qa_bias."""
    tr = tmp_path / "tr"
    result = cli("build", "qa-instruction-items", "--out", tr / "parts.jsonl")
    assert result.exit_code == 0, result.output
    config = {"name": "tr", "task": "translate", "data": "parts.jsonl",
              "roles": {"translator": {"provider": "openai", "base_url": translate_server.base_url,
                                       "model": "translator-model", "max_retries": 2, "timeout_s": 10}},
              "options": {"targets": ["chittagong"]}}
    (tr / "tr.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    assert cli("run", tr / "tr.yaml", "--no-progress").exit_code == 0
    assert cli("export", tr / "tr.yaml", "--items", tr / "done.jsonl").exit_code == 0
    done = {r["id"]: r for r in map(json.loads, (tr / "done.jsonl").read_text(encoding="utf-8").splitlines())}
    qa_dir = tmp_path / "exp" / "instructions"
    result = cli("build", "qa-instructions", tr / "done.jsonl", "--out", qa_dir)
    assert result.exit_code == 0, result.output
    assert "machine (translate, model translator-model)" in result.output
    written = read_instruction(qa_dir / "chittagong.j2", "chittagong", "x", "missing")
    assert written.source == "machine (translate, model translator-model)"
    assert "not checked by a speaker" in written.note
    ctg = {k: " ".join(done[k]["variants"]["chittagong"].split()) for k in done}
    assert written.body == (f"{ctg['qa_instruction']}\n{ctg['qa_question_label'].rstrip(':')}: {{{{ question }}}}\n"
                            f"({ctg['qa_only_answer']})\n")
    # a second build refuses to overwrite what a person may have corrected
    again = cli("build", "qa-instructions", tr / "done.jsonl", "--out", qa_dir)
    assert again.exit_code != 0 and "--overwrite" in again.output

    p = project(qa, tmp_path, translate_server.base_url, instructions="per_variant", instructions_dir="instructions")
    result = cli("run", p.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    for row in generations(cli, p, tmp_path / "export"):
        if row["variant"] == "chittagong":
            assert prompt_text(row).startswith(ctg["qa_instruction"] + "\n")
    out = tmp_path / "report"
    assert cli("report", p.yaml_path, "--out", out).exit_code == 0
    table = instructions_csv(out)
    assert table["chittagong"]["source"] == "machine (translate, model translator-model)"
    assert table["sylhet"]["source"].startswith("paper §3.2")


def test_qa_instructions_refuses_items_without_the_parts(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "items.jsonl"
    bad.write_text(json.dumps({"id": "qa_instruction", "variants": {"standard": "অন্য কিছু",
                                                                    "sylhet": "x"}}) + "\n", encoding="utf-8")
    result = cli("build", "qa-instructions", bad, "--out", tmp_path / "out")
    flat = " ".join(result.output.split())
    assert result.exit_code != 0 and "qa_question_label, qa_only_answer missing" in flat
    assert "Traceback" not in result.output
