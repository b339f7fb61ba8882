"""Vision-language tasks (BanglaVerse): VQA, captioning and commonsense short answers across dialects."""

from __future__ import annotations

from dialectbias.tasks.vlm._caption import CaptionOptions, CaptionTask
from dialectbias.tasks.vlm._csu import CSUOptions, CSUTask
from dialectbias.tasks.vlm._vqa import VQAOptions, VQATask

__all__ = ["CSUOptions", "CSUTask", "CaptionOptions", "CaptionTask", "VQAOptions", "VQATask"]
