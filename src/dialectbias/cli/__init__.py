"""The `dialectbias` command line."""

from dialectbias.cli._main import app, main

__all__ = ["app", "main"]
