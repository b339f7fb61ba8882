"""`Stage.validator(model_id)`: a judge's own rubric first, else the stage's."""

from __future__ import annotations

from pydantic import BaseModel

from dialectbias.run._stage import Stage


class A(BaseModel):
    a: int


class B(BaseModel):
    b: int


def test_per_model_validator_falls_back_to_the_stage_rubric() -> None:
    stage = Stage("judge", [], lambda store, model: iter(()), rubric=A, rubrics={"judge-b": B})
    assert (stage.validator("judge-b"), stage.validator("judge-a")) == (B, A)
    assert Stage("generate", [], lambda store, model: iter(())).validator("m") is None
