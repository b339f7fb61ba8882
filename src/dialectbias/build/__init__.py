"""Building benchmark inputs: question sets from templates (SPEC §4 P1) and generations made elsewhere."""

from dialectbias.build._generations import GenerationImport, GenerationRecord, import_generations
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

__all__ = ["PAPER_DOMAINS", "QUESTION_TYPES", "TEMPLATES", "DomainTopics", "GenerationImport",
           "GenerationRecord", "Question", "build_questions", "genitive", "import_generations", "load_topics"]
