"""Building benchmark inputs: question sets from templates (SPEC §4 P1)."""

from dialectbias.build._questions import (
    PAPER_DOMAINS,
    QUESTION_TYPES,
    TEMPLATES,
    DomainTopics,
    Question,
    build_questions,
    genitive,
    load_topics,
)

__all__ = ["PAPER_DOMAINS", "QUESTION_TYPES", "TEMPLATES", "DomainTopics", "Question", "build_questions", "genitive",
           "load_topics"]
