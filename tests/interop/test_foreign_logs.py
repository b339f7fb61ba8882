"""`import-generations --from inspect / lm-eval` on logs the real packages wrote (fixtures/README.md), without
either package: every sample lands on the request the run would send, all or nothing, and every refusal names
the file and the sample at fault."""

from __future__ import annotations

import json
import shutil
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import pytest
from interop_fixture import FIXTURES, fixture_experiment

from dialectbias.api import open_experiment
from dialectbias.errors import DataError
from dialectbias.interop import exported_prompts, inspect_records, lm_eval_records
from dialectbias.interop._inspect_log import read_inspect_log

IDS = {f"q0{i}|{v}" for i in (1, 2, 3) for v in ("standard", "chittagong", "sylhet")}


def stored(store: Path) -> dict[str, tuple[str, str, str, str]]:
    """request id -> (model, item, variant, output) of every stored generation."""
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT q.request_id, q.model_id, q.item_id, q.variant, r.output FROM requests q "
                          "JOIN results r USING (request_id) WHERE q.stage = 'generate'").fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def samples_of(path: Path) -> dict[str, str]:
    """sample id -> completion, read straight from the zip/JSON (the fixture as written)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))["samples"]
    else:
        import zstandard

        with zipfile.ZipFile(path) as zf:  # inspect writes zstd members (zip method 93)
            data = []
            for info in zf.infolist():
                if info.filename.startswith("samples/"):
                    with zf.open(info) if info.compress_type != 93 else _zstd(zf, info, zstandard) as fh:
                        data.append(json.loads(fh.read()))
    return {d["id"]: d["output"]["choices"][0]["message"]["content"] for d in data if not d.get("error")}


def _zstd(zf: zipfile.ZipFile, info: zipfile.ZipInfo, zstandard: Any) -> Any:
    import io
    import struct

    assert zf.fp is not None
    zf.fp.seek(info.header_offset)
    head = zf.fp.read(30)
    zf.fp.seek(struct.unpack("<H", head[26:28])[0] + struct.unpack("<H", head[28:30])[0], io.SEEK_CUR)
    return io.BytesIO(zstandard.ZstdDecompressor().stream_reader(zf.fp.read(info.compress_size),
                                                                 read_across_frames=True).read())


@pytest.fixture
def exp_path(tmp_path: Path) -> Path:
    return fixture_experiment(tmp_path / "exp")


@pytest.mark.parametrize("name", ["inspect.eval", "inspect.json"])
def test_an_inspect_log_lands_on_the_requests_the_run_sends(cli: Any, exp_path: Path, name: str) -> None:
    log = FIXTURES / name
    result = cli("import-generations", exp_path, log, "--from", "inspect", "--model", "model-a")
    assert result.exit_code == 0, result.output
    assert "9 sample(s): 9 imported, 0 unchanged" in result.stdout
    exp, task = open_experiment(exp_path)
    wanted = {p.request_ids["model-a"]: p for p in exported_prompts(exp, task)}  # the ids `run` would give
    rows = stored(exp.store_path)
    assert set(rows) == set(wanted)  # every sample on the very request the run would send, none elsewhere
    answers = samples_of(log)
    assert set(answers) == IDS
    for request_id, (model, item, variant, output) in rows.items():
        assert model == "model-a" and (wanted[request_id].item_id, wanted[request_id].variant) == (item, variant)
        assert output == answers[f"{item}|{variant}"]
    again = cli("import-generations", exp_path, log, "--from", "inspect", "--model", "model-a")
    assert "9 sample(s): 0 imported, 9 unchanged" in again.stdout  # re-importing: a no-op


def test_the_json_and_eval_logs_of_one_run_read_alike() -> None:
    by_format = [{r.model_dump_json(exclude={"metadata", "latency_s"}) for _, r in inspect_records(FIXTURES / n, "m")}
                 for n in ("inspect.eval", "inspect.json")]
    assert by_format[0] == by_format[1] and len(by_format[0]) == 9
    header, _ = read_inspect_log(FIXTURES / "inspect.eval")
    assert header.status == "success" and header.eval["model"] == "openai-api/testserver/model-a"
    first = inspect_records(FIXTURES / "inspect.eval", "m")[0][1]
    assert first.finish_reason == "stop" and first.tokens_in > 0 and first.tokens_out > 0
    assert first.metadata["harness"] == "inspect_ai" and first.metadata["sample_id"] == "q01|chittagong"


def test_samples_with_errors_are_counted_and_refused(cli: Any, exp_path: Path) -> None:
    log = FIXTURES / "inspect_error.eval"
    result = cli("import-generations", exp_path, log, "--from", "inspect", "--model", "model-a")
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "3 of 9 sample(s) have an error or no output" in err and "nothing was imported" in err
    assert "samples/q02|chittagong_epoch_1.json (id 'q02|chittagong'): RetryError" in err
    exp, _ = open_experiment(exp_path)
    assert not exp.store_path.exists() or not stored(exp.store_path)  # all or nothing


def test_an_lm_eval_samples_file_lands_on_the_requests_the_run_sends(cli: Any, exp_path: Path) -> None:
    log = FIXTURES / "lm_eval_samples.jsonl"
    result = cli("import-generations", exp_path, log, "--from", "lm-eval", "--model", "model-b")
    assert result.exit_code == 0, result.output
    assert "9 sample(s): 9 imported" in result.stdout
    exp, task = open_experiment(exp_path)
    wanted = {p.request_ids["model-b"] for p in exported_prompts(exp, task)}
    rows = stored(exp.store_path)
    assert set(rows) == wanted
    raw = {json.loads(line)["doc"]["id"]: json.loads(line)["resps"][0][0]
           for line in log.read_text(encoding="utf-8").splitlines()}
    assert {f"{i}|{v}": o for _, i, v, o in rows.values()} == raw


def edited_lm_eval(tmp_path: Path, line: int, change: Any) -> Path:
    rows = [json.loads(x) for x in (FIXTURES / "lm_eval_samples.jsonl").read_text(encoding="utf-8").splitlines()]
    change(rows[line - 1])
    out = tmp_path / "samples.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def test_lm_eval_refusals_name_the_line_and_sample(cli: Any, exp_path: Path, tmp_path: Path) -> None:
    def unknown_item(r: dict[str, Any]) -> None:
        r["doc"].update(id="q09|standard", item_id="q09")

    path = edited_lm_eval(tmp_path, 2, unknown_item)
    result = cli("import-generations", exp_path, path, "--from", "lm-eval", "--model", "model-b")
    assert result.exit_code == 1
    assert f"{path}:2 (doc_id 1, id 'q09|standard'): item 'q09' is not in the experiment's data" in result.stderr

    def edited_id(r: dict[str, Any]) -> None:
        r["doc"]["id"] = "q01|sylhet"

    path = edited_lm_eval(tmp_path, 1, edited_id)
    with pytest.raises(DataError, match=r"samples.jsonl:1 .*says item 'q01' variant 'sylhet', its metadata item "
                                        r"'q01' variant 'chittagong'"):
        lm_eval_records(path, "m")

    def no_answer(r: dict[str, Any]) -> None:
        r["resps"] = [[""]]

    path = edited_lm_eval(tmp_path, 4, no_answer)
    with pytest.raises(DataError, match=r"1 of 9 sample\(s\) have an error or no output"):
        lm_eval_records(path, "m")
    exp, _ = open_experiment(exp_path)
    assert not stored(exp.store_path)  # all or nothing: the good samples beside the unknown item were not kept


def test_a_different_answer_for_a_stored_request_is_an_error(cli: Any, exp_path: Path, tmp_path: Path) -> None:
    ok = cli("import-generations", exp_path, FIXTURES / "lm_eval_samples.jsonl", "--from", "lm-eval",
             "--model", "model-b")
    assert ok.exit_code == 0, ok.output

    def other_answer(r: dict[str, Any]) -> None:
        r["resps"] = [["উত্তর: মেঘনা।"]]

    path = edited_lm_eval(tmp_path, 3, other_answer)
    result = cli("import-generations", exp_path, path, "--from", "lm-eval", "--model", "model-b")
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert f"{path}:3 (doc_id 2, id 'q01|sylhet'): model-b/q01/sylhet: output 'উত্তর: মেঘনা।' conflicts" in err
    assert "nothing was imported" in err


def test_model_is_required_and_checked_once(cli: Any, exp_path: Path) -> None:
    log = FIXTURES / "inspect.eval"
    result = cli("import-generations", exp_path, log, "--from", "inspect")
    assert result.exit_code == 1 and "--from inspect needs --model ID" in result.stderr
    result = cli("import-generations", exp_path, log, "--from", "inspect", "--model", "gpt-x")
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "model 'gpt-x' is not a model of bnqa.yaml (models: model-a, model-b) (and 8 more record(s) of it)" in err
    assert err.count("is not a model of") == 1
    result = cli("import-generations", exp_path, log, "--from", "helm", "--model", "model-a")
    assert result.exit_code == 1 and "--from 'helm': one of dialectbias, inspect, lm-eval" in result.stderr
    result = cli("import-generations", exp_path, log, "--model", "model-a")
    assert result.exit_code == 1 and "--model is for --from inspect / lm-eval" in result.stderr


def test_what_is_not_a_log_is_named(tmp_path: Path) -> None:
    zip_path = tmp_path / "other.eval"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("data.txt", "x")
    with pytest.raises(DataError, match=r"a zip without header\.json: not an inspect_ai \.eval log"):
        inspect_records(zip_path, "m")
    bad = tmp_path / "bad.json"
    bad.write_text('{"samples": []}', encoding="utf-8")
    with pytest.raises(DataError, match="not an inspect_ai log"):
        inspect_records(bad, "m")
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"item_id": "q01"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"samples.jsonl:1: not an lm-eval sample"):
        lm_eval_records(samples, "m")
    foreign = tmp_path / "foreign.json"
    data = json.loads((FIXTURES / "inspect.json").read_text(encoding="utf-8"))
    data["samples"][0]["id"] = 17  # a sample of some other dataset
    data["samples"][0]["metadata"] = {}
    foreign.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match=r"samples\[0\] \(id 17\): sample id '17' is not one `dialectbias export`"):
        inspect_records(foreign, "m")


def test_a_deflate_eval_log_reads_too(tmp_path: Path) -> None:
    """Older inspect_ai versions wrote deflate members: the same log recompressed reads the same."""
    import io
    import struct

    import zstandard

    out = tmp_path / "deflate.eval"
    with zipfile.ZipFile(FIXTURES / "inspect.eval") as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            assert src.fp is not None
            src.fp.seek(info.header_offset)
            head = src.fp.read(30)
            src.fp.seek(struct.unpack("<H", head[26:28])[0] + struct.unpack("<H", head[28:30])[0], io.SEEK_CUR)
            raw = src.fp.read(info.compress_size)
            data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read() \
                if info.compress_type == 93 else raw
            dst.writestr(info.filename, data)
    assert [r.output for _, r in inspect_records(out, "m")] == \
        [r.output for _, r in inspect_records(FIXTURES / "inspect.eval", "m")]
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_epochs_agreeing_count_once_and_differing_are_an_error(cli: Any, exp_path: Path, tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "inspect.json").read_text(encoding="utf-8"))
    second = json.loads(json.dumps(data["samples"][0]))
    second["epoch"] = 2
    data["samples"].append(second)
    same = tmp_path / "epochs.json"
    same.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = cli("import-generations", exp_path, same, "--from", "inspect", "--model", "model-a")
    assert result.exit_code == 0 and "10 sample(s): 9 imported, 1 unchanged" in result.stdout, result.output
    second["output"]["choices"][0]["message"]["content"] = "উত্তর: মেঘনা।"
    differ = tmp_path / "differ.json"
    differ.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = cli("import-generations", exp_path, differ, "--from", "inspect", "--model", "model-a")
    assert result.exit_code == 1
    assert "samples[9] (id 'q01|chittagong'): model-a/q01/chittagong: output differs from samples[0] (id " \
        "'q01|chittagong') of the same file" in " ".join(result.stderr.split())
