"""Test helpers shipped with dialectbias: an OpenAI-compatible server with fault injection.

>>> from dialectbias.testing import TestServer
>>> with TestServer(faults={"rules": [{"kind": "429", "per_prompt_first_n": 1}]}) as srv:
...     ...  # point a client at srv.base_url; srv.stats() counts what it received

Inside, one job a module: `_client` (TestServer: the server as a subprocess, its port, its control routes),
`_serve` (running the app; the command line, with `_server_help`), `_app` (the HTTP routes; `_state` counts
the calls), `_wire` (OpenAI bodies), `_image_parts` (the image check), `_faults` (fault rules) and
`_fault_effects` (what a fired rule does), `_responders` (the responder contract, echo answers) and one
`_*_responder` module per study stand-in. Responders read requests through `_messages` and data through
small readers (`_trait_words`): the test server imports no task module.
"""

from __future__ import annotations

from dialectbias.testing._app import make_app
from dialectbias.testing._association_responder import association_responder
from dialectbias.testing._client import TestServer, TestServerError
from dialectbias.testing._decision_responder import probe_responder
from dialectbias.testing._faults import FAULT_KINDS, FaultInjector, FaultKind, FaultRule, FaultSpec
from dialectbias.testing._fidelity_responder import fidelity_responder
from dialectbias.testing._messages import fingerprint
from dialectbias.testing._qa_responder import qa_responder
from dialectbias.testing._responders import echo_text
from dialectbias.testing._schema_fill import fill_schema
from dialectbias.testing._serve import serve
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
