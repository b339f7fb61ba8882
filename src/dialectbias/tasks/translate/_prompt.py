"""The translator's prompts: what a target is (a dialect or another language, its script and labels),
the retrieved few-shot examples (SPEC §4 P1 hybrid index), and the rendered template."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dialectbias.dialects import _registry, language_of
from dialectbias.errors import ConfigError
from dialectbias.tasks._templates import render, template_exists
from dialectbias.text import script_for_language

_SCRIPT_NAMES = {"bengali": "Bengali", "latin": "Latin", "german": "Latin", "devanagari": "Devanagari",
                 "arabic": "Arabic", "urdu": "Perso-Arabic"}
#: language names of the bare-language variants (the registry's `languages:`)
_LANGUAGE_CODES = {"bengali": "bn", "german": "de"}


@dataclass(frozen=True)
class Target:
    """A variant the translator writes: a dialect (of `language`) or another language."""

    variant: str
    kind: Literal["dialect", "language"]
    display: str
    language: str  # the language of the source text ("Bengali"): for a dialect also its own
    script: str | None
    code: str = ""  # a dialect's language code ("bn"), from the registry or `dialects:`

    @property
    def source_label(self) -> str:
        return f"Standard {self.language}:" if self.kind == "dialect" else f"{self.language}:"

    @property
    def target_label(self) -> str:
        return f"{self.display} dialect:" if self.kind == "dialect" else f"{self.display}:"

    @property
    def script_name(self) -> str:
        return _SCRIPT_NAMES.get(self.script or "", (self.script or "its usual").capitalize())


def language_name(code: str) -> str:
    """`bn` -> "Bengali" (from the registry; the code itself when unknown)."""
    entry = _registry().get(code)
    return str(entry.get("name", code)) if isinstance(entry, dict) else code.capitalize()


def resolve_target(variant: str, *, extra: dict[str, list[str]], source_language: str,
                   scripts: dict[str, str]) -> Target:
    """The target named `variant`: a registered dialect (or one added under `dialects:`), else a language."""
    name = variant.lower()
    code = language_of(name, extra)
    display = name.replace("_", " ").title()
    script = scripts.get(name) or _script_of(name, extra)
    if code is not None:
        return Target(name, "dialect", display, language_name(code), script, code)
    if name in _registry().get("languages", []):
        return Target(name, "language", display, language_name(source_language), script)
    raise ConfigError(f"{variant!r} is neither a registered dialect nor a language")


def _script_of(variant: str, extra: dict[str, list[str]]) -> str | None:
    """The script a dialect's or language's text is written in (`dialectbias.text.script_for_language`);
    None when none is known (the translation's script is then not checked)."""
    try:
        return script_for_language(variant, extra=extra)
    except ValueError:
        return None


def source_language(targets: Sequence[str], extra: dict[str, list[str]], given: str | None) -> str:
    """The language code of the source text: `given`, else that of the first dialect target, else bn."""
    if given:
        return _LANGUAGE_CODES.get(given.lower(), given.lower())
    return next((code for t in targets if (code := language_of(t, extra))), "bn")


@dataclass(frozen=True)
class Example:
    """A retrieved standard/dialect pair shown in the prompt, with its scores (SPEC §4 P1)."""

    pair_id: str
    standard: str
    dialect_text: str
    dialect: str
    score: float


@dataclass(frozen=True)
class TranscriptExample:
    """A retrieved dialect-only transcript shown as style context (Bengali paper §3.1, Pipeline 1)."""

    transcript_id: str
    text: str
    dialect: str
    score: float


class Retriever:
    """The hybrid index (`dialectbias.retrieval.HybridIndex`) of a translate experiment: checked against its
    corpus when opened (`open`), loaded once on first search (no re-embedding)."""

    def __init__(self, index_dir: Path, corpus: Path | None = None, settings: dict[str, Any] | None = None) -> None:
        self.index_dir = index_dir
        #: retrieval settings of the experiment over the index's own (`RetrievalConfig` fields)
        self.settings = dict(settings or {})
        #: the corpus file the index must match (None: the one it was built from, while still there)
        self.corpus = corpus
        #: what had changed in the corpus when this retriever rebuilt the index (`open(rebuild=True)`), else None
        self.rebuilt: str | None = None
        self._manifest: Any = None
        self._index: Any = None
        self._vectors: dict[str, Any] = {}  # query -> its embedding: one per text, whatever the targets

    def open(self, *, rebuild: bool = False) -> Any:
        """The index's manifest, checked against the corpus (DataError naming both fingerprints and the rebuild
        command when the corpus changed since the build); `rebuild`: rebuild a stale index first."""
        retrieval = _retrieval()
        if rebuild and (why := retrieval.HybridIndex.refresh(self.index_dir, self.corpus)) is not None:
            self.rebuilt = why
        self._manifest = retrieval.open_manifest(self.index_dir, self.corpus)
        return self._manifest

    @property
    def manifest(self) -> Any:
        return self._manifest if self._manifest is not None else self.open()

    @property
    def index(self) -> Any:
        if self._index is None:
            self._index = _retrieval().HybridIndex.load(self.index_dir, corpus=self.corpus)
            if self.settings:
                self._index.config = self._index.config.model_copy(update=self.settings)
        return self._index

    def dialects(self) -> dict[str, int]:
        """Pairs per dialect in the index."""
        return dict(self.manifest.dialects)

    def transcript_dialects(self) -> dict[str, int]:
        """Dialect-only transcripts per dialect in the index (empty: it holds none)."""
        return dict(getattr(self.manifest, "transcript_dialects", {}) or {})

    def describe(self) -> str:
        """`N pairs, split(s) validation excluded` of the index."""
        m = self.manifest
        held = f", split(s) {', '.join(m.exclude_splits)} excluded ({m.excluded:,} pairs)" if m.exclude_splits else ""
        return f"{m.pairs:,} pairs{held}"

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed the queries about to be searched in batches (`Embedder.embed_queries`: much faster per text
        than one by one); the vectors kept are those of the latest call."""
        keys = list(dict.fromkeys(q for text in queries if (q := self._normalized(text).normalized)))
        embedder = self.index.embedder
        self._vectors = {}
        for lo in range(0, len(keys), 64):
            batch = keys[lo:lo + 64]
            self._vectors.update(zip(batch, embedder.embed_queries(batch), strict=True))

    def _normalized(self, query: str) -> Any:
        from dialectbias.text import normalize_query

        return normalize_query(query, short_tokens=self.index.config.short_tokens)

    def examples(self, query: str, dialect: str, k: int) -> list[Example]:
        """The k best pairs for `query`, the target dialect's first."""
        q = self._normalized(query)
        if not q.normalized:
            return []
        if q.normalized not in self._vectors:
            self._vectors[q.normalized] = self.index.embedder.embed_query(q.normalized)
        hits = self.index.search_embedded(q, self._vectors[q.normalized], dialect=dialect, k=k)
        return [Example(str(h.pair_id), h.standard, h.dialect_text, str(h.dialect), float(h.score)) for h in hits]

    def transcripts(self, query: str, dialect: str, k: int) -> list[TranscriptExample]:
        """The k dialect-only transcripts of `dialect` most similar to `query` (none of that dialect: empty)."""
        q = self._normalized(query)
        if not q.normalized or k <= 0:
            return []
        if q.normalized not in self._vectors:
            self._vectors[q.normalized] = self.index.embedder.embed_query(q.normalized)
        hits = self.index.search_transcripts(q, self._vectors[q.normalized], dialect=dialect, k=k)
        return [TranscriptExample(str(h.transcript_id), h.text, str(h.dialect), float(h.score)) for h in hits]

    def leaked(self, texts: Sequence[str]) -> bool:
        """True when one of `texts` is the standard side of a pair the index holds (SPEC §4 P1: items whose
        standard text was retrieval data would be translated from their own reference)."""
        return any(self.index.contains_standard(t) for t in texts)


def _retrieval() -> Any:
    try:
        import dialectbias.retrieval as retrieval
    except ImportError as exc:
        raise ConfigError(f"the translator's index needs the retrieval extra ({exc}): "
                          "pip install 'dialectbias[retrieval]'") from None
    return retrieval


def index_dir_for(corpus: Path | None, index: Path | None) -> Path | None:
    """The index folder: `index` when given, else where `dialectbias index build CORPUS` stores it."""
    if index is not None:
        return index
    if corpus is None:
        return None
    try:
        from dialectbias.retrieval import default_index_dir
    except ImportError as exc:
        raise ConfigError(f"options.corpus needs the retrieval extra ({exc}): pip install "
                          "'dialectbias[retrieval]'") from None
    return Path(default_index_dir(corpus))


def template_name(target: Target, user_dir: Path | None) -> str:
    """The template for a target: translate/<variant> (user's) > translate/dialect_<lang> > translate/dialect
    for a dialect, translate/language for a language."""
    own = f"translate/{target.variant}"
    if template_exists(own, user_dir):
        return own
    if target.kind == "language":
        return "translate/language"
    specific = f"translate/dialect_{target.code}"
    return specific if target.code and template_exists(specific, user_dir) else "translate/dialect"


def render_prompt(name: str, user_dir: Path | None, target: Target, text: str, *, numbered: bool, n_lines: int,
                  examples: Sequence[Example], transcripts: Sequence[TranscriptExample] = ()) -> str:
    """The user message of one translation request (pure). `transcripts`: dialect-only style context, shown
    apart from the standard/dialect pairs (templates: `transcripts`, each with id, text, dialect)."""
    shown = [{"pair_id": e.pair_id, "standard": e.standard, "dialect_text": e.dialect_text, "dialect": e.dialect,
              "label": f"{e.dialect.replace('_', ' ').title()} dialect:"} for e in examples]
    context = [{"id": t.transcript_id, "text": " ".join(t.text.split()), "dialect": t.dialect} for t in transcripts]
    return render(name, user_dir, target=target.display, target_variant=target.variant, language=target.language,
                  script=target.script_name, source_label=target.source_label, target_label=target.target_label,
                  examples=shown, transcripts=context, text=text, numbered=numbered, n_lines=n_lines)


#: a transcript text no template could contain by chance: a template that renders it shows transcripts
_PROBE = "⟦transcript-probe⟧"


def shows_transcripts(name: str, user_dir: Path | None, target: Target) -> bool:
    """Whether the template renders the `transcripts` it is given (a user's template from before transcripts
    existed would drop them silently)."""
    probe = TranscriptExample("probe", _PROBE, target.variant, 1.0)
    return _PROBE in render_prompt(name, user_dir, target, "x", numbered=False, n_lines=1, examples=(),
                                   transcripts=(probe,))


# -- the LoRA generator's instruction prompt (`options.prompt: instruction`) ----------------------------------

#: the template name stored with instruction requests (the text comes from `dialectbias.train`, not a file)
INSTRUCTION_TEMPLATE = "translate/instruction"


def instruction_check(targets: dict[str, Target], translator: Any, where: str) -> None:
    """`options.prompt: instruction` translates into dialects only (the training format of
    `dialectbias train-translator`, BanglaVerse App. C.1), and a local `hf` translator must take it verbatim
    (`prompt_format: raw`): a chat template would wrap it in text the adapter never saw."""
    languages = [t.variant for t in targets.values() if t.kind != "dialect"]
    if languages:
        raise ConfigError(f"{where}: options.prompt: instruction translates standard text into dialects only "
                          f"(the train-translator format); {', '.join(languages)}: not a dialect")
    if getattr(translator, "prompt_format", "raw") != "raw":  # a provider with that setting (hf) and not raw
        raise ConfigError(f"{where}: options.prompt: instruction: set `prompt_format: raw` on the translator "
                          f"{translator.id!r} (provider {translator.provider}), so the instruction reaches the model "
                          "verbatim as in training; without it the tokenizer's chat template or role labels wrap it")


def instruction_request(target: Target, text: str, params: dict[str, Any], is_list: bool
                        ) -> tuple[str, dict[str, Any]]:
    """The prompt of one `options.prompt: instruction` request — exactly the training instruction up to
    `<Dialect> dialect:` (`dialectbias.train.instruction_prompt`) — and its params: the continuation is cut at
    a new line (not for a list, sent as numbered lines), the next `Standard <language>:` label or a new
    instruction, unless the model's params set their own `stop`."""
    from dialectbias.train import instruction_prompt, stop_markers

    stops = [s for s in stop_markers(target.language) if not (is_list and s == "\n")]
    return (instruction_prompt(target.language, target.display, text),
            params if "stop" in params else {**params, "stop": stops})
