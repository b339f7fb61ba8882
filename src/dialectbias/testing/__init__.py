"""Test helpers shipped with dialectbias: an OpenAI-compatible server with fault injection.

>>> from dialectbias.testing import TestServer
>>> with TestServer(faults={"rules": [{"kind": "429", "per_prompt_first_n": 1}]}) as srv:
...     ...  # point a client at srv.base_url; srv.stats() counts what it received
"""

from __future__ import annotations

from dialectbias.testing._decision_responder import probe_responder
from dialectbias.testing._faults import FAULT_KINDS, FaultInjector, FaultKind, FaultRule, FaultSpec
from dialectbias.testing._fidelity_responder import fidelity_responder
from dialectbias.testing._probe_responder import association_responder
from dialectbias.testing._responders import qa_responder
from dialectbias.testing._schema_fill import fill_schema
from dialectbias.testing._server import (
    TestServer,
    TestServerError,
    echo_text,
    fingerprint,
    make_app,
    serve,
)
from dialectbias.testing._translate_responder import translate_responder
from dialectbias.testing._vlm_responder import vlm_responder

__all__ = [
    "FAULT_KINDS",
    "FaultInjector",
    "FaultKind",
    "FaultRule",
    "FaultSpec",
    "TestServer",
    "TestServerError",
    "association_responder",
    "echo_text",
    "fidelity_responder",
    "fill_schema",
    "fingerprint",
    "make_app",
    "probe_responder",
    "qa_responder",
    "serve",
    "translate_responder",
    "vlm_responder",
]
