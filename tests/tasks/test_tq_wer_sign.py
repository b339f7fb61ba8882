"""options.wer_in_table3 (docs/departures.md): the Bengali paper's Table 3 reports WER's correlation with the
human scores as it is (WER↓, r = −0.404); our default inverts WER first (1 − WER/100) so every metric is
higher = better. Pearson flips its sign; Lin's CCC changes value (it depends on the scale), checked by hand."""

from __future__ import annotations

import pytest

from dialectbias.tasks.translation_quality._data import TQRow
from dialectbias.tasks.translation_quality._tables import ALL, TQData, normalized, table3

WER = [80.0, 20.0, 60.0, 40.0, 100.0, 0.0]  # per row, ×100
HUMAN = [2.0, 8.0, 5.0, 6.0, 1.0, 9.0]


def data() -> TQData:
    rows = [TQRow(f"r{i}", f"r{i}", "sylhet", f"src {i}", f"ref {i}", f"f:{i}", systems={"A": f"hyp {i}"})
            for i in range(6)]
    return TQData(rows=rows, systems=["A"], metrics=["wer"], local={"wer": {(r.key, "A"): w for r, w in
                                                                              zip(rows, WER, strict=True)}},
                  judges={}, human={(r.key, "A"): (h, 1) for r, h in zip(rows, HUMAN, strict=True)})


def ccc(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / n
    vx, vy = sum((x - mx) ** 2 for x in xs) / n, sum((y - my) ** 2 for y in ys) / n
    return 2 * cov / (vx + vy + (mx - my) ** 2)


def test_wer_is_inverted_by_default_and_kept_as_an_error_rate_for_the_paper() -> None:
    assert normalized("wer", 30.0) == pytest.approx(0.7)
    assert normalized("wer", 30.0, invert_wer=False) == pytest.approx(0.3)
    ours = next(r for r in table3(data(), min_ccc=0.4, min_pairs=3) if r["dialect"] == ALL)
    paper = next(r for r in table3(data(), min_ccc=0.4, min_pairs=3, invert_wer=False) if r["dialect"] == ALL)
    assert ours["pearson"] > 0 > paper["pearson"]
    assert paper["pearson"] == pytest.approx(-ours["pearson"])
    ys = [h / 10 for h in HUMAN]
    assert ours["ccc"] == pytest.approx(ccc([1 - w / 100 for w in WER], ys))
    assert paper["ccc"] == pytest.approx(ccc([w / 100 for w in WER], ys))
    assert paper["ccc"] < 0 < ours["ccc"]
    assert paper["metric_mean"] == pytest.approx(0.5) and ours["metric_mean"] == pytest.approx(0.5)
