"""The licence identifiers the Hugging Face Hub accepts in a card's `license:` (its documented list,
https://huggingface.co/docs/hub/repositories-licenses); `other` needs `license_name` and `license_link`."""

from __future__ import annotations

import difflib

from dialectbias.errors import ConfigError

HUB_LICENSES = frozenset({
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m", "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
    "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
    "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0",
    "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0",
    "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1",
    "lgpl-3.0", "isc", "h-research", "intel-research", "lppl-1.3c", "ms-pl", "apple-ascl", "apple-amlr", "mpl-2.0",
    "odc-by", "odbl", "openrail++", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense", "zlib", "pddl",
    "lgpl-lr", "deepfloyd-if-license", "fair-noncommercial-research-license", "llama2", "llama3", "llama3.1",
    "llama3.2", "llama3.3", "llama4", "gemma", "unknown", "other",
})


def check_license(value: str) -> str:
    """The identifier, lower-cased; ConfigError naming the closest Hub identifier when it is not one."""
    lic = value.strip().lower()
    if lic in HUB_LICENSES:
        return lic
    close = difflib.get_close_matches(lic, sorted(HUB_LICENSES), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(f"--license {value!r} is not a Hugging Face licence identifier ({hint}see "
                      "https://huggingface.co/docs/hub/repositories-licenses; `other` for a licence not listed)")
