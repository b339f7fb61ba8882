"""dialectbias: measure how language models treat speakers of regional dialects."""

__version__ = "0.6.0"
