"""Stereotype probes (German paper): association and decision, and what they share."""

from __future__ import annotations

