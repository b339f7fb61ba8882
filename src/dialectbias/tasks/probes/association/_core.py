"""Association task of the stereotype probes: traits, prompts, strict parsing and the bias score.

Pure core (no model calls, no store): SPEC §4 P4, after Bui et al. 2025, "Large Language Models
Discriminate Against Speakers of German Dialects" (§3.1 traits and prompt prefix, §3.3 association task,
App. B.3 equal-option variant, App. D.1/D.2 word lists). One concept per module, re-exported here:
`probes/_traits.py` (traits, writer labels and their YAML files: the only I/O), `probes/_prompt.py`,
`_parse`, `_score`; the decision task reuses the traits and the prompt pieces.
"""

from __future__ import annotations

from dialectbias.tasks.probes._prompt import (
    ASSOCIATION_INSTRUCTION,
    NEUTRAL_INSTRUCTION,
    WRITER_PREFIX,
    AssociationPrompt,
    Writer,
    build_association_prompt,
)
from dialectbias.tasks.probes._traits import (
    ADJECTIVES_PER_POLE,
    Pole,
    Trait,
    WriterLabels,
    load_traits,
    load_writer_labels,
)
from dialectbias.tasks.probes.association._parse import Answer, AssociationParse, parse_association
from dialectbias.tasks.probes.association._score import AssociationScore, association_bias

__all__ = [
    "ADJECTIVES_PER_POLE",
    "ASSOCIATION_INSTRUCTION",
    "NEUTRAL_INSTRUCTION",
    "WRITER_PREFIX",
    "Answer",
    "AssociationParse",
    "AssociationPrompt",
    "AssociationScore",
    "Pole",
    "Trait",
    "Writer",
    "WriterLabels",
    "association_bias",
    "build_association_prompt",
    "load_traits",
    "load_writer_labels",
    "parse_association",
]
