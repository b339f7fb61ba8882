"""Command-line entry: ``python -m dialectbias.testing.server --port 0 [--faults FILE] [--api-key KEY]``."""

from __future__ import annotations

from dialectbias.testing._serve import main

if __name__ == "__main__":
    main()
