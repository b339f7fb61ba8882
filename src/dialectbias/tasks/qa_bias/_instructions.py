"""The answer instruction each qa_bias variant is asked with, and where its text came from.

The Bengali dialect-bias paper (§3.2, "Example Prompt (Sylhet)") asks for the answer in standard Bengali, but
writes that instruction *in the question's dialect*. `instructions: standard` (our default) asks every variant
with the one standard-Bengali instruction (`qa_bias/answer.j2`); `instructions: per_variant` (the paper's
procedure) asks each dialect variant with its own instruction template, looked up in this order:

1. `<instructions_dir>/<variant>.j2` (the user's files, relative to the experiment file);
2. `<templates_dir>/qa_bias/answer_<variant>.j2` (the older per-variant override);
3. the package's `qa_bias/instructions/<variant>.j2` (only Sylhet: the one the paper prints).

The standard variant uses `<instructions_dir>/standard.j2` when present, else the standard instruction. A
dialect variant without a template is an error naming the variant and the file expected.

Each template may start with a YAML front matter block (between two `---` lines, stripped before rendering)
naming its provenance: `source:` `paper §X …`, `machine (translate, model M) …`, `user …` or `package …`,
plus optional `variant:` (must match the file's variant) and `note:`. A user file without front matter is
`user`; every packaged instruction has one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2
import jinja2.meta
from pydantic import BaseModel, ConfigDict, ValidationError

from dialectbias._yaml import load_yaml
from dialectbias.data import STANDARD
from dialectbias.errors import ConfigError
from dialectbias.tasks._identity import file_identity

InstructionMode = Literal["standard", "per_variant"]
#: the paper's procedure (Bengali paper §3.2): the instruction written in each dialect
PAPER_MODE: InstructionMode = "per_variant"
PACKAGED_DIR = "qa_bias/instructions"
STANDARD_TEMPLATE = "qa_bias/answer"
#: accepted provenance forms (a free-text tail may follow, e.g. the reconstruction note's short form)
SOURCE_FORMS = re.compile(r"^(paper §\S+|machine \(translate, model [^)]+\)|user|package)( .*)?$", re.DOTALL)
_FRONT = "---"


class InstructionMeta(BaseModel):
    """A template's front matter."""

    model_config = ConfigDict(extra="forbid")

    source: str
    variant: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Instruction:
    """The answer template of one variant: its label (stored with each request), file, text and provenance."""

    variant: str
    label: str
    path: Path
    body: str
    body_line: int  # the file line the body starts on (after the front matter)
    source: str
    note: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body.encode("utf-8")).hexdigest()

    @cached_property
    def _template(self) -> jinja2.Template:
        env = _environment()
        try:
            ast = env.parse(self.body)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{self.path}:{exc.lineno + self.body_line - 1}: {exc.message}") from None
        if "question" not in jinja2.meta.find_undeclared_variables(ast):
            raise ConfigError(f"{self.path}: the instruction for variant {self.variant!r} never uses "
                              "{{ question }}, so the question would not be sent")
        return env.from_string(self.body)

    def check(self) -> None:
        """Raise ConfigError now (file and line) for a template that cannot be rendered."""
        _ = self._template

    def render(self, question: str, variant: str) -> str:
        try:
            return self._template.render(question=question, variant=variant).strip()
        except jinja2.TemplateError as exc:
            line = getattr(exc, "lineno", None)
            where = f"{self.path}:{line + self.body_line - 1}" if line else str(self.path)
            raise ConfigError(f"{where}: {exc}") from None


def _environment() -> jinja2.Environment:
    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


def package_templates() -> Path:
    return Path(str(resources.files("dialectbias") / "templates"))


def packaged_variants() -> list[str]:
    """The variants the package has a dialect-written instruction for."""
    return sorted(p.stem for p in (package_templates() / PACKAGED_DIR).glob("*.j2"))


def read_instruction(path: Path, variant: str, label: str, default_source: str) -> Instruction:
    """Read a template file, split off its front matter and check it (ConfigError naming file and key)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the instruction for variant {variant!r}: {exc}") from None
    meta, body, body_line = InstructionMeta(source=default_source), text, 1
    lines = text.split("\n")
    if lines and lines[0].strip() == _FRONT:
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FRONT)
        except StopIteration:
            raise ConfigError(f"{path}:1: front matter opened with '---' is never closed by a '---' line") from None
        data, _ = load_yaml("\n".join(lines[1:end]), f"{path} (front matter)", ConfigError)
        if not isinstance(data, dict):
            raise ConfigError(f"{path}:2: front matter must be a mapping with at least `source:`")
        try:
            meta = InstructionMeta.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"]) or "source"
            raise ConfigError(f"{path}: front matter key {key!r}: {err['msg']}") from None
        body, body_line = "\n".join(lines[end + 1:]), end + 2
    source = " ".join(meta.source.split())
    if not SOURCE_FORMS.match(source):
        raise ConfigError(f"{path}: front matter `source: {meta.source}` is not one of: 'paper §<section>', "
                          "'machine (translate, model <model>)', 'user', 'package' (a note may follow)")
    if meta.variant is not None and meta.variant != variant:
        raise ConfigError(f"{path}: front matter says `variant: {meta.variant}` but the file is used for "
                          f"variant {variant!r}")
    return Instruction(variant=variant, label=label, path=path, body=body, body_line=body_line, source=source,
                       note=" ".join((meta.note or "").split()))


class Instructions:
    """Resolves (once each) the instruction template of every variant under the task's options."""

    def __init__(self, mode: InstructionMode, instructions_dir: Path | None, templates_dir: Path | None,
                 instructions_dir_label: str | None = None) -> None:
        self.mode = mode
        self.dir = instructions_dir
        self.dir_label = instructions_dir_label or (str(instructions_dir) if instructions_dir else None)
        self.templates_dir = templates_dir
        self._cache: dict[str, Instruction] = {}

    def for_variant(self, variant: str) -> Instruction:
        if variant not in self._cache:
            instruction = self._resolve(variant)
            instruction.check()
            self._cache[variant] = instruction
        return self._cache[variant]

    def _user(self, name: str) -> Path | None:
        if self.templates_dir is None:
            return None
        path = self.templates_dir / f"{name}.j2"
        return path if path.is_file() else None

    def _standard(self, variant: str) -> Instruction:
        user = self._user(STANDARD_TEMPLATE)
        if user is not None:
            return read_instruction(user, variant, STANDARD_TEMPLATE, "user")
        return read_instruction(package_templates() / f"{STANDARD_TEMPLATE}.j2", variant, STANDARD_TEMPLATE,
                                "package (the standard-Bengali instruction)")

    def _resolve(self, variant: str) -> Instruction:
        legacy_name = f"qa_bias/answer_{variant}"
        legacy = self._user(legacy_name)
        if self.mode == "standard":
            if legacy is not None and variant != STANDARD:
                return read_instruction(legacy, variant, legacy_name, "user")
            return self._standard(variant)
        if self.dir is not None:
            own = self.dir / f"{variant}.j2"
            if own.is_file():
                return read_instruction(own, variant, f"{self.dir_label}/{variant}.j2", "user")
            if self.dir.exists() and not self.dir.is_dir():
                raise ConfigError(f"options.instructions_dir: {self.dir} is not a directory")
        if variant == STANDARD:
            return self._standard(variant)
        if legacy is not None:
            return read_instruction(legacy, variant, legacy_name, "user")
        packaged = package_templates() / PACKAGED_DIR / f"{variant}.j2"
        if packaged.is_file():
            return read_instruction(packaged, variant, f"{PACKAGED_DIR}/{variant}", "package")
        raise ConfigError(self._missing(variant))

    def _missing(self, variant: str) -> str:
        where = (f"{self.dir / f'{variant}.j2'} (options.instructions_dir)" if self.dir is not None
                 else f"<instructions_dir>/{variant}.j2 (set options.instructions_dir)")
        return (f"qa_bias: instructions: per_variant, but variant {variant!r} has no instruction template: "
                f"expected {where}. The package has one only for: {', '.join(packaged_variants()) or 'none'}. "
                "Write it in the dialect (docs/qa-instructions.md shows how to make it with a translate run), or "
                "set instructions: standard (under replicate: paper, set replicate: toolkit: the paper asked each "
                "dialect in that dialect)")

    def identity(self, base_dir: Path) -> dict[str, Any]:
        """Content hashes of every template the lookup may read, by name (`tasks._identity.input_name`: from
        the package or from `base_dir`, the experiment's folder): they go into the compile fingerprint, so
        editing a variant's instruction rebuilds (and re-asks) that variant's prompts, and the same templates
        elsewhere (a study moved, the package installed at another path) do not."""
        folders = [package_templates() / PACKAGED_DIR, package_templates() / "qa_bias"]
        if self.dir is not None:
            folders.append(self.dir)
        if self.templates_dir is not None:
            folders.append(self.templates_dir / "qa_bias")
        out: dict[str, Any] = {"mode": self.mode}
        for folder in folders:
            if folder.is_dir():
                for f in sorted(folder.glob("*.j2")):
                    name, digest = file_identity(f, base_dir)
                    out[name] = digest
        return out
