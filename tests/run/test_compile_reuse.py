"""Re-runs with unchanged inputs reuse the compiled request set; any changed input rebuilds it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dialectbias.api import run_experiment
from dialectbias.tasks.qa_bias import QABiasTask


@pytest.fixture
def counted_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = QABiasTask._generation_requests

    def counting(self: QABiasTask, store: Any, model: Any) -> Any:
        calls.append(model.id)
        return original(self, store, model)

    monkeypatch.setattr(QABiasTask, "_generation_requests", counting)
    return calls


def test_unchanged_rerun_reuses_the_compiled_requests(qa: Any, qa_server: Any, tmp_path: Path,
                                                      counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url)
    first = run_experiment(project.yaml_path, progress=False)
    assert counted_builds == ["model-a", "model-b"]
    again = run_experiment(project.yaml_path, progress=False)
    assert counted_builds == ["model-a", "model-b"]  # no rebuild
    assert again.calls_made == 0
    assert [(s.stage, s.model_id, s.total, s.already_done) for s in again.stages] == \
        [(s.stage, s.model_id, s.total, s.total) for s in first.stages]


def test_edited_data_file_rebuilds_and_sends_only_the_new_requests(qa: Any, qa_server: Any, tmp_path: Path,
                                                                   counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=3)
    run_experiment(project.yaml_path, progress=False)
    items = tmp_path / "items.jsonl"
    with items.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(qa.qa_item(3), ensure_ascii=False) + "\n")
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 4
    generated = {s.model_id: s.calls for s in again.stages if s.stage == "generate"}
    assert generated == {"model-a": 3, "model-b": 3}  # the new item in its 3 variants
    assert sum(s.calls for s in again.stages if s.stage == "judge") == 2 * 2  # 2 models × 2 dialects


def test_edited_template_rebuilds(qa: Any, qa_server: Any, tmp_path: Path, counted_builds: list[str]) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    templates = tmp_path / "templates" / "qa_bias"
    templates.mkdir(parents=True)
    (templates / "answer_sylhet.j2").write_text("সিলেটি: {{ question }}", encoding="utf-8")
    project.rewrite(options={"templates_dir": "templates"})
    run_experiment(project.yaml_path, progress=False)
    (templates / "answer_sylhet.j2").write_text("সিলেটি ভাষায়: {{ question }}", encoding="utf-8")
    st = (templates / "answer_sylhet.j2").stat()
    os.utime(templates / "answer_sylhet.j2", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 4
    assert {s.model_id: s.calls for s in again.stages if s.stage == "generate"} == {"model-a": 2, "model-b": 2}


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Rewrite `path` with `old` replaced by `new` (same length) and put its size and mtime back, as `cp -p`,
    `rsync -t` or an archive restore leave a file edited elsewhere."""
    assert len(old.encode()) == len(new.encode())
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_edit_keeping_size_and_mtime_rebuilds(qa: Any, qa_server: Any, tmp_path: Path,
                                              counted_builds: list[str]) -> None:
    """The compile fingerprint follows the data's content, not its size and mtime: an edited question whose
    file kept both (before: the old prompts were reused, silently)."""
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    run_experiment(project.yaml_path, progress=False)
    question = json.loads((tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    standard = question["variants"]["standard"]
    _same_size_edit(tmp_path / "items.jsonl", standard, standard[::-1])
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 4
    assert {s.model_id: s.calls for s in again.stages if s.stage == "generate"} == {"model-a": 1, "model-b": 1}


def test_touched_or_moved_study_reuses_the_compiled_requests(qa: Any, qa_server: Any, tmp_path: Path,
                                                             counted_builds: list[str]) -> None:
    """Same content, another mtime or another folder (a study copied to a cluster's head node, a checkout
    restored): nothing is rebuilt (at 10× the paper a rebuild is 12–26 min of CPU, benchmarks/README.md)."""
    project = qa.make_project(tmp_path / "here", qa_server.base_url, n_items=2)
    templates = tmp_path / "here" / "templates" / "qa_bias"
    templates.mkdir(parents=True)
    (templates / "answer_sylhet.j2").write_text("সিলেটি: {{ question }}", encoding="utf-8")
    project.rewrite(options={"templates_dir": "templates"})
    run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 2
    for f in (tmp_path / "here" / "items.jsonl", templates / "answer_sylhet.j2"):
        st = f.stat()
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    again = run_experiment(project.yaml_path, progress=False)
    assert len(counted_builds) == 2 and again.calls_made == 0
    moved = tmp_path / "there"
    (tmp_path / "here").rename(moved)
    elsewhere = run_experiment(moved / project.yaml_path.name, progress=False)
    assert len(counted_builds) == 2 and elsewhere.calls_made == 0
    assert [s.already_done for s in elsewhere.stages] == [s.total for s in elsewhere.stages]


def test_instruction_identity_is_the_same_for_a_package_installed_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The package's instruction templates are named from the package, not by their absolute path: the same
    version installed at another path (a new venv, a cluster node) does not rebuild every prompt."""
    import shutil

    from dialectbias.tasks import _identity
    from dialectbias.tasks.qa_bias import _instructions

    study = tmp_path / "study"
    here = _instructions.Instructions("per_variant", None, None).identity(study)
    assert not any(str(_identity.package_root()) in name for name in here)
    elsewhere = tmp_path / "venv2" / "site-packages" / "dialectbias"
    shutil.copytree(_instructions.package_templates(), elsewhere / "templates")
    monkeypatch.setattr(_instructions, "package_templates", lambda: elsewhere / "templates")
    monkeypatch.setattr(_identity, "package_root", lambda: elsewhere)
    assert _instructions.Instructions("per_variant", None, None).identity(study) == here
    (elsewhere / "templates" / "qa_bias" / "instructions" / "sylhet.j2").write_text("edited: {{ question }}",
                                                                                    encoding="utf-8")
    assert _instructions.Instructions("per_variant", None, None).identity(study) != here


def test_an_items_images_are_known_by_content_and_relative_name(tmp_path: Path) -> None:
    """The images a vqa study's items name: replaced by another image of the same size and mtime, the compile
    fingerprint changes; the study moved to another folder, it does not."""
    import io

    import yaml
    from PIL import Image

    from dialectbias.config import load_experiment
    from dialectbias.tasks import load_task

    def identity(folder: Path) -> Any:
        return load_task(load_experiment(folder / "v.yaml")).input_identity()

    study = tmp_path / "here"
    (study / "images").mkdir(parents=True)
    for i, colour in enumerate(((200, 0, 0), (0, 0, 200))):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), colour).save(buf, format="BMP")  # BMP: same size whatever the colour
        (study / f"images/{i}.bmp").write_bytes(buf.getvalue())
    rows = [{"id": f"q{i}", "domain": "river", "image": f"images/{i}.bmp", "variants": {"standard": {
        "question": "ছবিতে কী আছে?", "options": ["নদী", "নৌকা"], "answer_index": 0}}} for i in range(2)]
    (study / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    config = {"name": "v", "task": "vqa", "data": "items.jsonl",
              "models": [{"id": "m", "provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}]}
    (study / "v.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    before = identity(study)
    assert before is not None and not any(str(tmp_path) in json.dumps(part) for part in before)
    first, second = study / "images/0.bmp", study / "images/1.bmp"
    st = first.stat()
    first.write_bytes(second.read_bytes())
    os.utime(first, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (first.stat().st_size, first.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    replaced = identity(study)
    assert replaced != before
    study.rename(tmp_path / "there")
    assert identity(tmp_path / "there") == replaced
