"""Topic labels (German paper App. A.5) and persona-name gender (App. E) through the CLI on the German study's real
parallel texts (`parallel_pairs.csv`), with the test server's probe responder as models, extractor and labeler;
plus hand-checked numbers for the rules and formulas. Needs ../shared/data for the CLI tests: skipped without it."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from scipy import stats

from dialectbias.store import Store
from dialectbias.tasks.probes._topics import NO_TOPIC, read_label
from dialectbias.tasks.probes.decision._gender import gender_counts, gender_test
from dialectbias.tasks.probes.decision._names import persona_name
from dialectbias.testing._decision_responder import PERSONA_NAMES
from shared_data import GERMAN, shared_path

CODES = {"bar": "bavarian", "als": "alemannic"}
DOMAINS = {0: "sports", 3: "Ortsnamen"}  # items given a `domain` by the user: never labelled


def german_items(per_dialect: int) -> list[dict[str, Any]]:
    pairs = shared_path(*GERMAN, "parallel_pairs.csv")
    items: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    with pairs.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            code = row["language"]
            if row["used_in_tasks"] != "True" or code not in CODES or taken.get(code, 0) >= per_dialect:
                continue
            taken[code] = taken.get(code, 0) + 1
            item: dict[str, Any] = {"id": f"{code}-{row['id']}", "language": "de",
                                    "variants": {"standard": row["standard_text"], CODES[code]: row["dialect_text"]}}
            if len(items) in DOMAINS:
                item["domain"] = DOMAINS[len(items)]
            items.append(item)
    return items


def write_study(root: Path, task: str, items: list[dict[str, Any]], base_url: str, **options: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                      encoding="utf-8")
    config: dict[str, Any] = {
        "name": task, "task": task, "data": "items.jsonl", "seed": 5,
        "models": [{"id": "model-a", "provider": "openai", "base_url": base_url, "model": "model-a"}],
        "roles": {"labeler": {"provider": "openai", "base_url": base_url, "model": "labeler-1"}},
        "options": {"setting": "usage", "traits": ["uneducated", "rural"], "n_resamples": 200, **options}}
    if task == "decision":
        config["roles"]["extractor"] = {"provider": "openai", "base_url": base_url, "model": "extractor"}
    path = root / f"{task}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def rewrite(path: Path, change: Any) -> None:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="module")
def probe_server() -> Any:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:probe_responder") as server:
        yield server


def label_requests(store_path: Path) -> dict[str, str]:
    """request id -> item id of the current label requests."""
    with Store.open(store_path, create=False) as store:
        return {r.request_id: r.item_id for r in store.stage_results("label", ok_only=False)}


def run_and_report(cli: Any, exp: Path, out: Path) -> None:
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    result = cli("report", exp, "--out", out)
    assert result.exit_code == 0, result.output


# -- topic labels ---------------------------------------------------------------------------------


def test_topic_labels_user_domain_and_relabel(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    items = german_items(per_dialect=8)
    given = {i["id"]: i["domain"] for i in items if "domain" in i}
    unlabelled = {i["id"] for i in items} - set(given)
    exp = write_study(tmp_path, "association", items, probe_server.base_url)
    run_and_report(cli, exp, tmp_path / "r1")
    # one label request per text without a `domain`; the user's domain wins (no request for those)
    first = label_requests(tmp_path / "association.sqlite")
    assert sorted(first.values()) == sorted(unlabelled)
    labels = pd.read_csv(tmp_path / "r1" / "association_topic_labels.csv").set_index("source_item")
    assert set(labels.index) == {i["id"] for i in items}
    for item_id, domain in given.items():
        assert (labels.loc[item_id, "topic"], labels.loc[item_id, "source"]) == (domain, "domain")
    mine = labels.loc[sorted(unlabelled)]
    assert set(mine.source) == {"labeler"}
    # the responder answers "miscellany" (not in the list) now and then: invalid, counted, in the no-topic group
    invalid = mine[mine.status == "invalid"]
    assert len(invalid) >= 1 and set(invalid.topic) == {NO_TOPIC}
    assert all("miscellany" in r for r in invalid.reason)
    from dialectbias.tasks.probes._topics import DEFAULT_TOPICS
    assert set(mine[mine.status == "ok"].topic) <= set(DEFAULT_TOPICS)
    # the per-model × topic table: n and mean recomputed from the answers file by hand
    answers = pd.read_csv(tmp_path / "r1" / "association_answers.csv")
    answers = answers.assign(source=answers.item_id.str.split("/").str[0])
    answers = answers.assign(topic=answers.source.map(labels.topic))
    table = pd.read_csv(tmp_path / "r1" / "association_bias_by_topic.csv").set_index(["model", "topic"])
    assert set(table.index.get_level_values("topic")) == set(labels.topic)
    for topic, g in answers.groupby("topic"):
        row = table.loc[("model-a", topic)]
        assert row.n_prompts == len(g)
        assert row.n_accepted == int(g.accepted.sum())
        assert row.bias == pytest.approx(g.loc[g.accepted, "bias"].mean(), nan_ok=True)
    assert int(table.loc[("model-a", NO_TOPIC), "n_prompts"]) == 2 * len(invalid)  # two traits per text
    per_trait = pd.read_csv(tmp_path / "r1" / "association_bias_by_topic_trait.csv")
    assert per_trait.n_prompts.sum() == len(answers)
    html = (tmp_path / "r1" / "index.html").read_text(encoding="utf-8")
    assert "Bias per model and topic" in html and "Topic labels of the usage texts" in html

    # changing the topic list relabels (new requests); the old labels are not reused
    rewrite(exp, lambda c: c["options"].update(topics=["history", "geography", "other"]))
    # a report before the run does not reuse the labels asked under the old list
    assert cli("report", exp, "--out", tmp_path / "r1b").exit_code == 0
    before = pd.read_csv(tmp_path / "r1b" / "association_topic_labels.csv").set_index("source_item")
    assert set(before.loc[sorted(unlabelled), "status"]) == {"stale"}
    assert set(before.loc[sorted(unlabelled), "topic"]) == {NO_TOPIC}
    run_and_report(cli, exp, tmp_path / "r2")
    second = label_requests(tmp_path / "association.sqlite")
    assert sorted(second.values()) == sorted(unlabelled) and not set(second) & set(first)
    relabelled = pd.read_csv(tmp_path / "r2" / "association_topic_labels.csv").set_index("source_item")
    ok = relabelled.loc[sorted(unlabelled)]
    assert set(ok[ok.status == "ok"].topic) <= {"history", "geography", "other"}
    assert set(ok.topic) != set(mine.topic)
    # changing the labeler relabels too: the current requests are the new labeler's
    rewrite(exp, lambda c: c["roles"]["labeler"].update(model="labeler-2"))
    run_and_report(cli, exp, tmp_path / "r3")
    third_ids = label_requests(tmp_path / "association.sqlite")
    assert sorted(third_ids.values()) == sorted(unlabelled) and not set(third_ids) & set(second)
    third = pd.read_csv(tmp_path / "r3" / "association_topic_labels.csv").set_index("source_item")
    assert not third.loc[sorted(unlabelled)].answer.equals(ok.answer)  # the second labeler answers differently
    # the paper's open question (App. A.5): no schema, the free answer is the label
    rewrite(exp, lambda c: c["options"].update(topic_prompt="open"))
    run_and_report(cli, exp, tmp_path / "r4")
    fourth = label_requests(tmp_path / "association.sqlite")
    assert not set(fourth) & set(third_ids)
    free = pd.read_csv(tmp_path / "r4" / "association_topic_labels.csv").set_index("source_item")
    assert set(free.loc[sorted(unlabelled), "topic"]) <= {"history", "biography", "geography"}
    assert set(free.loc[sorted(unlabelled), "status"]) == {"ok"}


def test_decision_topics_and_persona_gender(tmp_path: Path, cli: Any, probe_server: Any) -> None:
    items = german_items(per_dialect=3)
    exp = write_study(tmp_path, "decision", items, probe_server.base_url)
    run_and_report(cli, exp, tmp_path / "r")
    out = tmp_path / "r"
    # topics in the decision report
    labels = pd.read_csv(out / "decision_topic_labels.csv").set_index("source_item")
    answers = pd.read_csv(out / "decision_answers.csv")
    answers = answers.assign(topic=answers.item_id.str.split("/").str[0].map(labels.topic))
    by_topic = pd.read_csv(out / "decision_bias_by_topic.csv").set_index(["model", "prefix", "topic"])
    for topic, g in answers.groupby("topic"):
        row = by_topic.loc[("model-a", "default", topic)]
        assert row.n_answers == len(g) and row.n_extracted == int(g.extracted.sum())
        assert row.bias == pytest.approx(g.loc[g.extracted, "score"].mean(), nan_ok=True)

    # persona names: every profile of every split answer, named from the responder's list
    names = pd.read_csv(out / "decision_persona_names.csv", keep_default_na=False)
    assert set(names.name) <= set(PERSONA_NAMES) and len(names) == 2 * len(answers)
    assert set(names.writer) == {"standard", "dialect"}
    expected = {"Anna": "female", "Lena": "female", "Hans": "male", "Jürgen": "male", "Maria": "mostly_female",
                "Kim": "andy", "Zorblat": "unknown"}  # gender-guesser, germany
    assert {n: g for n, g in zip(names.name, names.gender, strict=True)} == {n: expected[n] for n in set(names.name)}
    counts = pd.read_csv(out / "decision_persona_gender.csv").set_index("writer")
    for writer, g in names.groupby("writer"):
        female = int(g.name.isin(["Anna", "Lena", "Maria"]).sum())  # mostly_female counts (gender_mostly: binary)
        male = int(g.name.isin(["Hans", "Jürgen"]).sum())
        row = counts.loc[writer]
        assert (row.n_profiles, row.n_female, row.n_male, row.andy, row.unknown) == (
            len(g), female, male, int((g.name == "Kim").sum()), int((g.name == "Zorblat").sum()))
        assert row.female_share == pytest.approx(female / (female + male))
    test = pd.read_csv(out / "decision_persona_gender_test.csv").iloc[0]
    s, d = counts.loc["standard"], counts.loc["dialect"]
    table = [[s.n_female, s.n_male], [d.n_female, d.n_male]]
    assert test.p == pytest.approx(stats.fisher_exact(table).pvalue)
    assert test["diff"] == pytest.approx(d.female_share - s.female_share)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "Gender of the persona names" in html and "Fisher" in html


# -- the rules and formulas, by hand ------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "name"), [
    ("Anna Huber (34) is a teacher from Munich.", "Anna"),
    ("Name: Sepp. Age: 52. Occupation: farmer.", "Sepp"),
    ("Dr. Lena Maier, a physicist who loves hiking.", "Lena"),
    ("Meet Jürgen, a carpenter.", "Jürgen"),
    ("is a thoughtful person who likes long walks.", None),
    ("He is a 40-year-old engineer named Hans.", "Hans"),
    ("She is a nurse (29) in Berlin.", None),
    ("A retired miner, fond of dogs.", None),
])
def test_persona_name_rule(profile: str, name: str | None) -> None:
    assert persona_name(profile) == name


def test_gender_shares_and_fisher_by_hand() -> None:
    """standard: Anna, Lena, Maria (mostly_female), Hans, Kim (andy), no name; dialect: Hans, Jürgen, Sepp, Anna.
    binary (mostly_* counted): standard 3 female / 1 male = 0.75, dialect 1 / 3 = 0.25; Fisher [[3, 1], [1, 3]]:
    hypergeometric (N 8, rows 4/4, cols 4/4) P(a) = C(4,a)C(4,4−a)/70 = 1, 16, 36, 16, 1 /70; observed a = 3
    (16/70), two-sided p = (1 + 16 + 16 + 1)/70 = 34/70; odds ratio 3·3/(1·1) = 9.
    separate: standard 2 / 1, dialect 1 / 3: [[2, 1], [1, 3]], N 7, P(a) = C(3,a)C(4,3−a)/35 = 4, 18, 12, 1 /35;
    a = 2 (12/35), p = (4 + 12 + 1)/35 = 17/35; odds ratio 2·3/(1·1) = 6."""
    genders = {"standard": ["female", "female", "mostly_female", "male", "andy", "no_name"],
               "dialect": ["male", "male", "male", "female"]}
    names = pd.DataFrame([{"request_id": f"r{i}", "model": "m", "setting": "usage", "condition": "dialect",
                           "dialect": "bavarian",
                           "writer": w, "name": None, "gender": g} for w, gs in genders.items()
                          for i, g in enumerate(gs)])
    counts = gender_counts(names, "binary").set_index("writer")
    assert counts.loc["standard", "female_share"] == 0.75 and counts.loc["dialect", "female_share"] == 0.25
    assert (counts.loc["standard", "n_named"], counts.loc["standard", "andy"], counts.loc["standard", "no_name"]) == \
        (5, 1, 1)
    test = gender_test(gender_counts(names, "binary")).iloc[0]
    assert test.p == pytest.approx(34 / 70) and test.odds_ratio == pytest.approx(9.0)
    assert test["diff"] == pytest.approx(-0.5)
    separate = gender_counts(names, "separate").set_index("writer")
    assert separate.loc["standard", "female_share"] == pytest.approx(2 / 3)
    test = gender_test(gender_counts(names, "separate")).iloc[0]
    assert test.p == pytest.approx(17 / 35) and test.odds_ratio == pytest.approx(6.0)


def test_read_label_rules() -> None:
    topics = ["history", "Science and technology", "other"]
    assert read_label('{"topic": "science AND technology "}', topics, "closed").topic == "Science and technology"
    bad = read_label('{"topic": "miscellany"}', topics, "closed")
    assert (bad.status, bad.topic) == ("invalid", NO_TOPIC) and "miscellany" in (bad.reason or "")
    assert read_label("History", topics, "closed").status == "invalid"  # not the JSON asked for
    assert read_label("**Topic area: Regional History.**\nMore text", topics, "open").topic == "regional history"
    assert read_label("   ", topics, "open").status == "invalid"


@pytest.mark.parametrize(("task", "change", "message"), [
    ("association", lambda c: c["options"].update(setting="naming"),
     "roles.labeler: topic labels are for the usage setting's texts"),
    ("association", lambda c: c["options"].update(topics=["History", "history "]), "a topic is listed twice"),
    ("decision", lambda c: c["options"].update(name_country="bavaria"), "options.name_country: unknown country"),
])
def test_configuration_errors_name_the_key(tmp_path: Path, cli: Any, task: str, change: Any, message: str) -> None:
    items = [{"id": "t1", "variants": {"standard": "Ich gehe nach Hause.", "bavarian": "I geh hoam."}}]
    exp = write_study(tmp_path, task, items, "http://127.0.0.1:9/v1")
    rewrite(exp, change)
    result = cli("plan", exp)
    assert result.exit_code != 0 and message in " ".join(result.output.split())
    assert str(exp.name) in result.output


def test_without_gender_guesser_the_section_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dialectbias.tasks.probes.decision import _gender

    monkeypatch.setattr(_gender, "guesser_available", lambda: False)
    meta = pd.DataFrame(columns=["model", "setting", "condition", "dialect", "dialect_writer"])
    sections = _gender.gender_sections([], meta, tmp_path, country="germany", mostly="binary")
    assert len(sections) == 1 and "pip install 'dialectbias[names]'" in (sections[0].text or "")
    assert not (tmp_path / "decision_persona_gender.csv").exists()


def test_persona_rows_map_letters_to_writers() -> None:
    """Writer B is the dialect writer here: Hans is the dialect persona, Anna the standard one; an answer without
    two profiles is counted, not read."""
    from dialectbias.tasks.probes.decision._gender import persona_rows

    meta = pd.DataFrame([{"request_id": "r1", "model": "m", "setting": "usage", "condition": "dialect",
                          "dialect": "bavarian", "dialect_writer": "B"},
                         {"request_id": "r2", "model": "m", "setting": "usage", "condition": "dialect",
                          "dialect": "bavarian", "dialect_writer": "A"}]).set_index("request_id")
    answers = [("r1", "Writer A: Anna Huber (30) is a chemist.\nWriter B: Hans (40), a roofer.\n\nTask 2: …"),
               ("r2", "Both writers are nice people.")]
    rows, unsplit = persona_rows(answers, meta, country="germany")
    assert unsplit == 1
    assert {(r.writer, r.name, r.gender) for r in rows.itertuples()} == {("standard", "Anna", "female"),
                                                                         ("dialect", "Hans", "male")}
