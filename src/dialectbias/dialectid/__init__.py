"""Dialect identification (issue 10 part 5, beyond the papers): a character n-gram classifier that labels a text
with a dialect of the registry or `standard`, trained in seconds from parallel corpora (their dialect and
standard sides) and dialect transcripts (RegSpeech12), evaluated on a grouped held-out split; the `translate`
task uses it to flag machine variants that read as another dialect or as standard Bengali.

    from dialectbias.dialectid import DialectIdentifier, train_dialect_id
    summary = train_dialect_id(corpora=["vashantor.yaml"], transcripts=["regspeech12.csv"], out="dialect-id/")
    ident = DialectIdentifier.load("dialect-id/")
    ident.predict(["তুমি কিতা খাইছো?"])            # [("sylhet", 0.93)]
    ident.check(["…"], expected=["chittagong"])      # [DialectCheck(verdict="other_dialect", …)]

Training needs scikit-learn (`pip install 'dialectbias[dialectid]'`); a saved model loads and predicts with
numpy and scipy only, without pickle.
"""

from dialectbias.dialectid._data import SKIP_KINDS, split_sentences
from dialectbias.dialectid._eval import LabelScore, confusion_matrix, label_scores, macro_f1
from dialectbias.dialectid._labels import canonical_label
from dialectbias.dialectid._model import VERDICTS, DialectCheck, DialectIdentifier, Verdict
from dialectbias.dialectid._train import ExternalEval, TrainSettings, TrainSummary, fit_dialect_id, train_dialect_id

__all__ = [
    "SKIP_KINDS",
    "VERDICTS",
    "DialectCheck",
    "DialectIdentifier",
    "ExternalEval",
    "LabelScore",
    "TrainSettings",
    "TrainSummary",
    "Verdict",
    "canonical_label",
    "confusion_matrix",
    "fit_dialect_id",
    "label_scores",
    "macro_f1",
    "split_sentences",
    "train_dialect_id",
]
