"""Annotation kinds: what a row of the `annotations` table holds."""

#: a human's scores replacing a judge's for one judgment (written by review import, read by reports and status);
#: value {"fields": {…}, "score": …, …}, the latest one of a judgment wins
OVERRIDE_KIND = "judgment_override"
