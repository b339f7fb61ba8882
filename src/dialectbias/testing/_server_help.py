"""`python -m dialectbias.testing.server --help`: wrapped to the terminal, at most 80 columns."""

from __future__ import annotations

import argparse
import shutil
import textwrap

MAX_WIDTH = 80

RESPONDERS = [
    ("echo", "answers with the request's text (JSON-schema requests get a valid object filled from the schema)"),
    ("fixed:TEXT", "answers TEXT to every request"),
    ("dialectbias.testing:qa_responder", "a qa_bias study: Bengali answers to questions, valid RLAIF judgments "
     "(hash-chosen scores) to judge requests"),
    ("dialectbias.testing:association_responder", "an association study: every adjective assigned to writer A "
     "or B (a built-in stereotype in the naming setting, a coin in the usage setting; some answers malformed on "
     "purpose)"),
    ("dialectbias.testing:translate_responder", "a translate study: stand-in dialect, English, Hindi or Urdu "
     "translations of translate prompts (wrapped in quotes, labels or notes on purpose); qa_responder's answers "
     "to everything else"),
    ("dialectbias.testing:fidelity_responder", "translation-fidelity judgments (translation_quality judges) whose "
     "inaccuracy count is the translation's words missing from the reference; some break a ceiling on purpose"),
    ("module:function", "your own: function(request body dict) -> answer text or None"),
]

FAULT_FIELDS = [
    ("kind", "one of 429, 500, 503, timeout, slow, truncated_json, invalid_json, out_of_range, empty_content, "
             "bad_body, length, llamacpp_json_schema (500 for a json_schema response_format, as "
             "llama-cpp-python), vllm_json_schema (400 for it)"),
    ("match", "substring of the model name or message text (default: every request)"),
    ("per_prompt_first_n", "the first N attempts of each distinct prompt fault, later ones succeed"),
    ("every", "every k-th matching request faults"),
    ("times", "at most N faults from this rule (alone: the first N matching requests)"),
    ("retry_after", "seconds in the Retry-After header (429, 503)"),
    ("delay_s", "sleep before answering (timeout: 5.0, slow: 0.05 by default)"),
]

DESCRIPTION = ("OpenAI-compatible test server (127.0.0.1 only) with deterministic answers and faults. Once it "
               'listens it prints one JSON line {"port": N} on stdout; stop it with SIGTERM or Ctrl-C.')


def help_width() -> int:
    """The terminal's width less argparse's margin of 2, at most 80 columns."""
    return min(shutil.get_terminal_size().columns, MAX_WIDTH) - 2


def _definitions(rows: list[tuple[str, str]], width: int, max_term: int = 24) -> list[str]:
    """`  term  description` rows, descriptions wrapped in one column; a longer term has a line of its own."""
    column = 2 + max(len(t) for t, _ in rows if len(t) <= max_term) + 2
    lines: list[str] = []
    for term, text in rows:
        wrapped = textwrap.wrap(text, width - column)
        if len(term) + 4 > column:
            lines.append(f"  {term}")
        else:
            lines.append(f"  {term:<{column - 2}}{wrapped.pop(0)}")
        lines += [" " * column + line for line in wrapped]
    return lines


def server_epilog(width: int) -> str:
    """What follows the options: the responders, the fault spec and an example."""
    return "\n".join([
        "responders:", *_definitions(RESPONDERS, width), "",
        *textwrap.wrap('fault spec (--faults): {"rules": [rule, ...]} or a bare list of rules, checked in order '
                       "for every generation request; the first rule that fires decides. Rule fields:", width),
        *_definitions(FAULT_FIELDS, width),
        """  e.g. --faults '[{"kind": "429", "per_prompt_first_n": 1}]'""", "",
        *textwrap.wrap("example (a background server for a qa_bias study; its port is written to server.json):",
                       width),
        "  python -m dialectbias.testing.server --port 0 \\",
        "      --responder dialectbias.testing:qa_responder > server.json &", ""])


class ServerParser(argparse.ArgumentParser):
    """The server's argument parser; its help fits the terminal (at most 80 columns)."""

    def __init__(self) -> None:
        super().__init__(prog="python -m dialectbias.testing.server", description=DESCRIPTION,
                         formatter_class=lambda prog: argparse.HelpFormatter(prog, width=help_width()))

    def format_help(self) -> str:
        return super().format_help() + "\n" + server_epilog(help_width())


__all__ = ["ServerParser", "server_epilog"]
