"""An index knows the corpus it was built from (issue 19 item 5): `index query` refuses an index whose corpus
file or data files changed since the build, naming both fingerprints, what changed and the rebuild command."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml
from retrieval_corpus import write_corpus, write_pairs

QUERY = "আমি ভাত খাই"


def fingerprints(output: str) -> tuple[str, str]:
    found = re.search(r"index fingerprint ([0-9a-f]{12}).*now ([0-9a-f]{12})", output)
    assert found, output
    return found.group(1), found.group(2)


def edit_spec(corpus: Path, **entry: Any) -> None:
    spec = yaml.safe_load(corpus.read_text("utf-8"))
    spec["files"][0].update(entry)
    corpus.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")


def test_other_files_in_the_corpus_file_are_refused_with_the_rebuild_command(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus).exit_code == 0
    edit_spec(corpus, path="data/Sylhet*.csv")
    res = cli("index", "query", corpus, QUERY, "--dialect", "chittagong")
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert f"{tmp_path / 'tiny.index'}: built from another state of the corpus" in text
    old, new = fingerprints(text)
    assert old != new
    assert "Chittagong Train.csv no longer read" in text and "files[0].path 'data/*.csv' → 'data/Sylhet*.csv'" in text
    assert f"rebuild it: `dialectbias index build {corpus}" in text
    assert "Traceback" not in res.output

    # the rebuild command it names makes the index current: only Sylhet pairs now
    assert cli("index", "build", corpus).exit_code == 0
    res = cli("index", "query", corpus, QUERY, "--json")
    assert res.exit_code == 0, res.output
    assert {hit["dialect"] for hit in json.loads(res.stdout)} == {"sylhet"}


def test_other_splits_are_refused(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus).exit_code == 0
    assert {h["split"] for h in json.loads(cli("index", "query", corpus, QUERY, "--json").stdout)} == {"train"}
    edit_spec(corpus, split="test")
    res = cli("index", "query", corpus, QUERY)
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert "files[0].split None → 'test'" in text and f"dialectbias index build {corpus}" in text


def test_a_data_file_edited_in_place_is_detected_by_its_content(tmp_path: Path, cli: Any) -> None:
    """Same name, same size, same modification time: only the content hash tells."""
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus).exit_code == 0
    data = tmp_path / "data" / "Sylhet Train.csv"
    before = data.stat()
    text = data.read_text("utf-8")
    edited = text.replace("ভালা", "ভালো", 1)  # one vowel sign for another: same UTF-8 length
    assert edited != text and len(edited.encode()) == len(text.encode())
    data.write_text(edited, encoding="utf-8")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    res = cli("index", "query", corpus, QUERY)
    assert res.exit_code == 1
    assert "data/Sylhet Train.csv content changed" in " ".join(res.output.split())


def test_an_index_queried_with_another_corpus_file_names_both(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus).exit_code == 0
    other = write_corpus(tmp_path / "other", name="other")
    write_pairs(tmp_path / "other" / "data" / "Sylhet Train.csv", [("আমি বই পড়ি", "আমি বই ফড়ি")], "Sylhet")
    res = cli("index", "query", other, QUERY, "--index", tmp_path / "tiny.index")
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert f"built from {corpus}" in text and f"{other} now" in text
    assert f"dialectbias index build {other} --out {tmp_path / 'tiny.index'}" in text


def test_an_unchanged_corpus_is_used_and_a_touched_file_is_fine(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus, "--exclude-split", "validation").exit_code == 0
    data = tmp_path / "data" / "Sylhet Train.csv"
    os.utime(data, ns=(data.stat().st_atime_ns, data.stat().st_mtime_ns + 10**9))  # touched, content the same
    res = cli("index", "query", corpus, QUERY, "--json")
    assert res.exit_code == 0, res.output


def test_the_rebuild_command_keeps_the_build_options(tmp_path: Path, cli: Any) -> None:
    corpus = write_corpus(tmp_path)
    out = tmp_path / "held"
    assert cli("index", "build", corpus, "--out", out, "--exclude-split", "validation").exit_code == 0
    write_pairs(tmp_path / "data" / "Sylhet Validation.csv", [("আমি বই পড়ি", "আমি বই ফড়ি")], "Sylhet")
    res = cli("index", "query", corpus, QUERY, "--index", out)
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert "data/Sylhet Validation.csv now read" in text
    assert f"dialectbias index build {corpus} --out {out} --exclude-split validation" in text


def test_an_index_without_a_corpus_fingerprint_is_refused(tmp_path: Path, cli: Any) -> None:
    """An index built before indexes recorded their corpus: it cannot tell, so it is not used."""
    corpus = write_corpus(tmp_path)
    assert cli("index", "build", corpus).exit_code == 0
    manifest_path = tmp_path / "tiny.index" / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8"))
    for key in ("corpus_fingerprint", "dialects"):
        manifest.pop(key)
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    res = cli("index", "query", corpus, QUERY)
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert "records no fingerprint of its corpus" in text and f"rebuild it: `dialectbias index build {corpus}" in text


def test_refresh_rebuilds_only_a_stale_or_unfingerprinted_index(tmp_path: Path, e5: Any) -> None:
    from dialectbias.retrieval import HybridIndex

    corpus = write_corpus(tmp_path)
    out = tmp_path / "tiny.index"
    HybridIndex.build(corpus, embedder=e5, out_dir=out, exclude_splits=["validation"])
    assert HybridIndex.refresh(out, corpus) is None
    write_pairs(tmp_path / "data" / "Sylhet Validation.csv", [("আমি বই পড়ি", "আমি বই ফড়ি")], "Sylhet")
    write_pairs(tmp_path / "data" / "Sylhet Test.csv", [("আমি গান গাই", "আমি গান গাই গো")], "Sylhet")
    assert HybridIndex.refresh(out, corpus) == "data/Sylhet Test.csv now read; data/Sylhet Validation.csv now read"
    index = HybridIndex.load(out, corpus=corpus)
    assert (index.manifest.pairs, index.manifest.excluded, index.manifest.exclude_splits) == (13, 1, ["validation"])

    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    del manifest["corpus_fingerprint"]
    (out / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    assert HybridIndex.refresh(out) == "no corpus fingerprint recorded"  # the corpus it was built from
    assert HybridIndex.load(out).manifest.corpus_fingerprint is not None
