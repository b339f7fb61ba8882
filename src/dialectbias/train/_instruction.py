"""The LoRA dialect generator's prompt formats (BanglaVerse App. C.1; SPEC §4 P1): one place, so that
`dialectbias train-translator` trains on exactly the text the `translate` task sends with
`options.prompt: instruction`. Pure functions, no torch.

Task 1, standard-to-dialect translation (App. C.1):
    Translate the following standard Bengali to Sylhet dialect: Standard Bengali: {x} Sylhet dialect: {y}
Task 2, native dialect conversation (App. C.1):
    User: {question in dialect} Assistant: {answer in dialect}

The prompt is everything up to and including the last label (`Sylhet dialect:`, `Assistant:`); the target is
a space and the text, then the tokenizer's end-of-sequence token. The language word comes from the dialect
registry (`dialectbias.dialects`): a German dialect says "standard German".
"""

from __future__ import annotations

from dialectbias.dialects import _registry, language_of

#: BanglaVerse App. C.1, Task 1 (the prompt part; the target follows after a space)
TRANSLATE_FORMAT = "Translate the following standard {language} to {dialect} dialect: Standard {language}: {text} " \
                   "{dialect} dialect:"
#: BanglaVerse App. C.1, Task 2
CONVERSATION_FORMAT = "User: {text} Assistant:"
#: where a continuation has left the translation: a new line, the next example's labels
CONTINUATION_MARKERS = ("Translate the following", "User:")


def dialect_display(dialect: str) -> str:
    """`low_german` -> "Low German" (the name the prompt shows; the translate task's `Target.display`)."""
    return dialect.replace("_", " ").title()


def language_name(code: str) -> str:
    """`bn` -> "Bengali", from the registry (the code itself, capitalised, when unknown)."""
    entry = _registry().get(code)
    return str(entry.get("name", code)) if isinstance(entry, dict) else code.capitalize()


def dialect_language(dialect: str, extra: dict[str, list[str]] | None = None) -> str:
    """The language name of a registered dialect (`sylhet` -> "Bengali"); ValueError for an unknown one."""
    code = language_of(dialect, extra)
    if code is None:
        raise ValueError(f"{dialect!r} is not a registered dialect (add it with `dialects: {{<language>: "
                         f"[{dialect}]}}`)")
    return language_name(code)


def instruction_prompt(language: str, dialect: str, text: str) -> str:
    """Task 1's prompt for `text` (standard `language`) into `dialect` (its display name), ending with
    `<Dialect> dialect:`. Newlines inside `text` become spaces: a training example is one line."""
    return TRANSLATE_FORMAT.format(language=language, dialect=dialect, text=" ".join(text.split()))


def conversation_prompt(text: str) -> str:
    """Task 2's prompt for a user turn in dialect, ending with `Assistant:`."""
    return CONVERSATION_FORMAT.format(text=" ".join(text.split()))


def target_text(text: str) -> str:
    """What follows the prompt in a training example: a space and the text on one line."""
    return " " + " ".join(text.split())


def stop_markers(language: str) -> tuple[str, ...]:
    """Stop strings for a continuation of the translation prompt: a new line, the next `Standard <language>:`
    label or a new instruction (BanglaVerse generates up to 50 new tokens: a model may run on)."""
    return ("\n", f"Standard {language}:", *CONTINUATION_MARKERS)
