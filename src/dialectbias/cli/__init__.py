"""The `dialectbias` command line."""

from dialectbias.cli._app import app, main

__all__ = ["app", "main"]
