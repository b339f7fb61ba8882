"""How translate records carry dialect checks: which translations are checked, the summary line, and the export
provenance of a variant with several field groups (a VQA question and its options)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dialectbias.dialectid import DialectCheck, DialectIdentifier
from dialectbias.dialectid._features import CharNgramFeatures
from dialectbias.tasks.translate._results import (
    Translation,
    check_dialects,
    check_text,
    dialect_id_lines,
    dialect_id_provenance,
)


def identifier() -> DialectIdentifier:
    """x → chittagong, y → standard, z → sylhet (weights 10 on unigrams)."""
    coef = np.zeros((3, 4))
    coef[0, 1] = coef[1, 2] = coef[2, 3] = 10.0
    return DialectIdentifier(CharNgramFeatures((" ", "x", "y", "z"), np.ones(4), (1, 1)),
                             ["chittagong", "standard", "sylhet"], coef, np.zeros(3))


def row(item: str, target: str, text: str | list[str] | None, status: str = "ok", field: str = "text") -> Translation:
    return Translation(request_id=f"{item}-{target}-{field}", item_id=item, target=target, template="t", field=field,
                       is_list=isinstance(text, list), source=("s",), status=status, reason="", output=None, text=text,
                       examples=(), leaked=None, prompt="")


def test_only_usable_translations_into_dialects_are_checked() -> None:
    rows = [row("a", "sylhet", "z"), row("a", "english", "x"), row("b", "sylhet", None, status="empty"),
            row("c", "sylhet", ["y", "y y"], field="options"), row("d", "chittagong", "z")]
    checked = check_dialects(rows, identifier(), {"sylhet", "chittagong"}, 0.5)
    assert [t.dialect_verdict for t in checked] == ["ok", None, None, "standard", "other_dialect"]
    assert rows[0].dialect_check is None  # the input rows are left as they were
    assert check_text(["y", "y y"]) == "y\ny y"
    assert dialect_id_lines(checked, ["sylhet", "chittagong"]) == [
        "dialect id: sylhet 1 ok, 1 standard · chittagong 1 other dialect (flags, not failures: flagged variants "
        "are still exported)"]
    assert dialect_id_lines(rows) == []


def test_provenance_of_one_and_several_groups() -> None:
    ok = DialectCheck(expected="sylhet", predicted="sylhet", probability=0.9, expected_probability=0.9, verdict="ok")
    std = DialectCheck(expected="sylhet", predicted="standard", probability=0.7, expected_probability=0.2,
                       verdict="standard")
    one = [row("a", "sylhet", "z")]
    assert dialect_id_provenance([replace(one[0], dialect_check=ok)]) == {"dialect_id": ok.as_dict()}
    assert dialect_id_provenance(one) == {}
    many = [replace(row("a", "sylhet", "z", field="question"), dialect_check=ok),
            replace(row("a", "sylhet", ["y"], field="options"), dialect_check=std)]
    prov = dialect_id_provenance(many)["dialect_id"]
    assert prov["verdict"] == "standard" and prov["field"] == "options"  # the most serious verdict leads
    assert prov["fields"] == {"question": ok.as_dict(), "options": std.as_dict()}
