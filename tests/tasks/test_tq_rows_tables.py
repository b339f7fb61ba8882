"""translation_quality (issue 10, SPEC §4 P2): the rows it reads, its configuration errors, and Tables 2 and 3
on hand-made data with known values."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import sacrebleu
import yaml
from scipy import stats

from dialectbias.errors import ConfigError, DataError
from dialectbias.metrics._translation import TextNormalization
from dialectbias.tasks.translation_quality._data import TQRow, attach_system, load_rows
from dialectbias.tasks.translation_quality._tables import ALL, Judged, TQData, item_rows, normalized, table2, table3

TABLE = """id,source,reference,dialect,gloss,sysA,sysB
1,আমি ভাত খাই,আমি ভাত খাই,sylhet,I eat rice,আমি ভাত খাই,আমি রুটি খাই
2,তুমি কোথায় যাও,তুমি কই যাও,Sylhet,,তুমি কই যাও,তুমি কোথায়
3,সে বাড়ি গেছে,হে বাড়িত গেছে,chittagong,,,সে বাড়ি
4,,x,sylhet,,a,b
5,আজ,,sylhet,,a,b
5,আজ,আইজ,standard,,a,b
1,আমি ভাত খাই,আমি ভাত খাইতাম,sylhet,,a,b
"""


def _load(path: Path, **kw: Any) -> Any:
    args = {"systems": ["sysA", "sysB"], "split": None, "dialects": None, "extra_dialects": {}} | kw
    return load_rows(path, **args)


def test_table_rows_are_checked_and_set_aside_rows_counted(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text(TABLE, encoding="utf-8")
    load = _load(path)
    assert [(r.key, r.dialect) for r in load.rows] == [("1", "sylhet"), ("2", "sylhet"), ("3", "chittagong")]
    assert load.rows[0].gloss == "I eat rice" and load.rows[0].systems == {"sysA": "আমি ভাত খাই",
                                                                            "sysB": "আমি রুটি খাই"}
    assert load.rows[2].systems == {"sysB": "সে বাড়ি"}  # an empty cell: no translation by sysA
    assert dict(load.rejected) == {"empty source": 1, "empty reference": 1, "no dialect": 1,
                                   "duplicate id and dialect": 1}
    assert load.examples["empty source"] == f"{path}:5"
    assert any("empty reference" in w and f"{path}:6" in w for w in load.warnings())
    only = _load(path, dialects=["chittagong"])
    assert [r.key for r in only.rows] == ["3"] and only.rejected["dialect not among `variants:`"] == 5


def test_shared_ids_across_dialects_get_dialect_keys(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    rows = [{"id": "s1", "source": "আমি", "reference": r, "dialect": d, "sysA": "x"}
            for d, r in (("sylhet", "আমি১"), ("barishal", "মুই"))]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    load = _load(path, systems=["sysA"])
    assert [r.key for r in load.rows] == ["s1:sylhet", "s1:barishal"]


def test_table_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("id,source,reference,dialect,sysA\n1,a,b,sylheti,c\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path}:2: dialect: unknown variant 'sylheti' \(did you mean 'sylhet'"):
        _load(path, systems=["sysA"])
    with pytest.raises(DataError, match=r"data.csv:2: missing column\(s\) sysB; .*found: id, source"):
        _load(path, systems=["sysA", "sysB"])
    with pytest.raises(DataError, match="not found"):
        _load(tmp_path / "nope.csv")
    with pytest.raises(ConfigError, match=r"options\.split"):
        _load(path, split="validation")


def test_items_file_and_corpus_yaml(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q1", "domain": "health", "variants": {
        "standard": "কী খাও?", "sylhet": "কিতা খাও?", "barishal": "কী খাও?"}}, ensure_ascii=False) + "\n",
        encoding="utf-8")
    load = _load(items, systems=[])
    assert [(r.key, r.dialect, r.reference, r.domain) for r in load.rows] == [
        ("q1:sylhet", "sylhet", "কিতা খাও?", "health"), ("q1:barishal", "barishal", "কী খাও?", "health")]

    (tmp_path / "pairs_validation.csv").write_text(
        "standard_text,dialect_text,dialect\nআমি যাই,মুই যাই,Barishal\nতুমি খাও,তুই খা,Barishal\n", encoding="utf-8")
    (tmp_path / "pairs_train.csv").write_text("standard_text,dialect_text,dialect\nসে আসে,হে আহে,Barishal\n",
                                              encoding="utf-8")
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "c", "files": [{"path": "pairs_*.csv", "standard": "standard_text",
                                                                 "dialect_text": "dialect_text",
                                                                 "dialect": "dialect"}]}), encoding="utf-8")
    load = _load(corpus, systems=[], split="validation")
    assert sorted(r.reference for r in load.rows) == ["তুই খা", "মুই যাই"]
    assert all(r.dialect == "barishal" for r in load.rows)
    with pytest.raises(ConfigError, match=r"no split 'dev'.*validation"):
        _load(corpus, systems=[], split="dev")


def test_attach_system_matches_by_item_then_by_source_text() -> None:
    from dialectbias.tasks.translation_quality._data import TQLoad

    load = TQLoad(rows=[TQRow("a", "a", "sylhet", "আমি  ভাত", "r1", "f:2"),
                        TQRow("b", "b", "sylhet", "তুমি", "r2", "f:3")])
    attach_system(load, "t", [("a", "sylhet", "আমি ভাত", "T1", "ok"),       # same item, source matches
                              ("zz", "sylhet", "তুমি", "T2", "ok"),           # other item id: by source text
                              ("b", "barishal", "তুমি", "T3", "ok"),          # wrong dialect: no row
                              ("a", "sylhet", "অন্য", None, "echo")])          # id matches, source does not
    assert load.rows[0].systems == {"t": "T1"} and load.rows[1].systems == {"t": "T2"}
    assert load.unmatched["t"] == 2 and load.rows[0].failed == {}


def _data(human: dict[tuple[str, str], float]) -> TQData:
    rows = [TQRow(f"r{i}", f"r{i}", "sylhet" if i < 6 else "barishal", f"src {i}", f"ref word {i}", f"f:{i}",
                  systems={"A": f"ref word {i}" if i % 2 else f"ref {i}", "B": "other"},
                  failed={} if i != 7 else {"C": "echo"})
            for i in range(10)]
    local = {"chrf": {(r.key, s): float(10 * i + (5 if s == "A" else 0)) for i, r in enumerate(rows)
                      for s in ("A", "B")}}
    judges = {"j1": {(r.key, "A"): Judged(float(i % 11), i == 3, "ok", own=float(i % 11)) for i, r in enumerate(rows)}}
    judges["j1"][("r9", "A")] = Judged(10.0, False, "ok", own=9.0, reviewed=True)  # a reviewer raised 9 to 10
    return TQData(rows=rows, systems=["A", "B"], metrics=["chrf", "judge"], local=local, judges=judges,
                  human={pair: (score, 1) for pair, score in human.items()})


def test_table2_counts_and_corpus_scores() -> None:
    data = _data({})
    data.local.pop("chrf")  # corpus chrF is computed from the texts, not from the per-row values
    t2 = table2(data, TextNormalization(), failed_as_empty=False, n_resamples=200, confidence=0.95, seed=0)
    by = {(r["system"], r["dialect"]): r for r in t2}
    assert set(by) == {(s, d) for s in "AB" for d in ("sylhet", "barishal", ALL)}
    a = by[("A", ALL)]
    assert a["n"] == 10 and a["failed"] == 0 and a["missing"] == 0
    hyps = [r.systems["A"] for r in data.rows]
    assert a["chrf"] == pytest.approx(sacrebleu.corpus_chrf(hyps, [[r.reference for r in data.rows]]).score)
    assert a["chrf_ci_low"] <= a["chrf"] <= a["chrf_ci_high"]
    # Table 2 counts the reviewer's 10, not the judge's own 9
    assert a["judge_j1"] == pytest.approx((sum(i % 11 for i in range(9)) + 10) / 10) and a["judge_j1_n"] == 10
    assert a["judge_j1_clipped"] == 1
    assert by[("B", "sylhet")]["judge_j1_n"] == 0 and math.isnan(by[("B", "sylhet")]["judge_j1"])
    assert by[("A", "barishal")]["n"] == 4


def test_table3_against_scipy_and_hand_computed_ccc() -> None:
    human = {(f"r{i}", "A"): float(h) for i, h in enumerate([2, 9, 3, 8, 5, 10, 1, 7, 4, 6])}
    data = _data(human)
    t3 = table3(data, min_ccc=0.4, min_pairs=4)
    row = next(r for r in t3 if r["metric"] == "chrf" and r["dialect"] == ALL)
    xs = [(10 * i + 5) / 100 for i in range(10)]
    ys = [h / 10 for h in human.values()]
    assert row["n"] == 10
    assert row["pearson"] == pytest.approx(stats.pearsonr(xs, ys)[0])
    assert row["spearman"] == pytest.approx(stats.spearmanr(xs, ys)[0])
    mx, my = sum(xs) / 10, sum(ys) / 10
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / 10
    vx, vy = sum((x - mx) ** 2 for x in xs) / 10, sum((y - my) ** 2 for y in ys) / 10
    assert row["ccc"] == pytest.approx(2 * cov / (vx + vy + (mx - my) ** 2))
    assert row["trusted"] is (row["ccc"] >= 0.4)
    judge = next(r for r in t3 if r["metric"] == "judge_j1" and r["dialect"] == "sylhet")
    assert judge["n"] == 6 and judge["metric_mean"] == pytest.approx(sum(i % 11 for i in range(6)) / 60)
    own = next(r for r in t3 if r["metric"] == "judge_j1" and r["dialect"] == "barishal")  # r6–r9: own scores
    assert own["metric_mean"] == pytest.approx((6 + 7 + 8 + 9) / 40)
    small = next(r for r in t3 if r["metric"] == "chrf" and r["dialect"] == "barishal")
    assert small["n"] == 4
    too_few = table3(data, min_ccc=0.4, min_pairs=5)
    few = next(r for r in too_few if r["metric"] == "chrf" and r["dialect"] == "barishal")
    assert few["trusted"] == "" and math.isnan(few["ccc"]) and "fewer than 5" in few["note"]
    assert table3(_data({}), min_ccc=0.4, min_pairs=4) == []


def test_normalised_scale_and_item_rows() -> None:
    assert normalized("bleu", 40.0) == 0.4 and normalized("chrf", 120.0) == 1.0
    assert normalized("wer", 25.0) == 0.75 and normalized("wer", 250.0) == 0.0
    assert normalized("embedding", -0.2) == 0.0 and normalized("bertscore", 0.83) == 0.83
    assert normalized("judge", 7) == 0.7 and normalized("chrf", math.nan) is None
    data = _data({("r1", "A"): 8.0})
    rows = item_rows(data)
    first = next(r for r in rows if r["row"] == "r1" and r["system"] == "A")
    assert first["human"] == 8.0 and first["human_annotators"] == 1 and first["target_id"] == "tq:r1:A"
    assert first["chrf"] == 15.0 and first["judge_j1"] == 1.0 and first["judge_j1_clipped"] is False
    last = next(r for r in rows if r["row"] == "r9" and r["system"] == "A")
    assert (last["judge_j1"], last["judge_j1_own"], last["judge_j1_reviewed"]) == (10.0, 9.0, True)


@pytest.mark.parametrize(("mode", "want"), [("mean", 5.0), ("latest", 8.0)])
def test_two_annotators_of_one_translation_give_the_mean_or_the_latest_score(tmp_path: Path, mode: str,
                                                                             want: float) -> None:
    """Table 3's human reference with two annotators (review.human_score): ann-b scored after ann-a; ann-a's
    own earlier score is replaced by their later one either way."""
    from dialectbias.review import save_annotation
    from dialectbias.store import Store
    from dialectbias.tasks.translation_quality._tables import HUMAN_KIND, read_human, target_id

    row = TQRow(key="k1", id="1", dialect="sylhet", source="s", reference="r", where="w", systems={"sysA": "t"})
    with Store.open(tmp_path / "s.sqlite") as store:
        save_annotation(store, target_id("k1", "sysA"), "ann-a", HUMAN_KIND, {"score": 9}, now=1.0)
        save_annotation(store, target_id("k1", "sysA"), "ann-a", HUMAN_KIND, {"score": 2}, now=2.0)
        save_annotation(store, target_id("k1", "sysA"), "ann-b", HUMAN_KIND, {"score": 8}, now=3.0)
        assert read_human(store, [row], ["sysA"], mode) == {("k1", "sysA"): (want, 2)}
