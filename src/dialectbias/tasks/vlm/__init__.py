"""Vision-language tasks (BanglaVerse): VQA and captioning across dialects."""

from __future__ import annotations

from dialectbias.tasks.vlm._caption import CaptionOptions, CaptionTask
from dialectbias.tasks.vlm._vqa import VQAOptions, VQATask

__all__ = ["CaptionOptions", "CaptionTask", "VQAOptions", "VQATask"]
