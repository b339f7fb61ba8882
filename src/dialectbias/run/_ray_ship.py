"""What the run's Ray jobs carry (SPEC §5, `executor: ray`): the code, not an install.

A cluster whose Python holds only `ray[data]` runs the run's tasks and actors because the driver connects with
a `runtime_env` whose `py_modules` hold the `dialectbias` package directory and the installed packages the
worker-side code imports that a bare `ray[data]` lacks (`SHIPPED`: found by importing the worker code in a
venv holding only `ray[data]` 2.60; `tests/scale/test_ray_cluster.py` runs a two-raylet cluster from such a
venv). They are shipped from this Python's own site-packages: Ray already requires the same Python version
on the driver and the cluster, and compiled packages (pydantic-core, aiohttp) need the same platform too
(`ray.ship_code: false` when the cluster has dialectbias installed instead). Workers need no experiment file:
requests reach them rendered (templates and rubrics are applied on the driver).

`check_reachable` turns an unreachable `ray.address` into one message within seconds (`ray.init` itself
retries for about a minute before it gives up)."""

from __future__ import annotations

import importlib
import socket
from types import ModuleType
from typing import Any

from dialectbias.errors import ConfigError

#: import names of the packages the worker code needs beyond a bare `ray[data]` (which brings numpy, pandas,
#: pyarrow, PyYAML, requests, typing_extensions, packaging …), each with the packages it imports itself
SHIPPED = (
    "pydantic", "pydantic_core", "annotated_types", "typing_inspection",  # records and configs
    "aiohttp", "multidict", "yarl", "propcache", "frozenlist", "aiosignal", "aiohappyeyeballs",  # the client
    "rich",  # imported by the run's summary records
)
#: seconds to wait for a TCP connection to the cluster's address before calling it unreachable
CONNECT_TIMEOUT_S = 3.0


def module_path(module: ModuleType) -> str:
    """A package's directory (or a single-file module's file), as `py_modules` takes it."""
    paths = list(getattr(module, "__path__", []))
    if len(paths) == 1:
        return str(paths[0])
    if module.__file__ is None or paths:
        raise ConfigError(f"ray.ship_code: cannot ship {module.__name__!r} (a namespace package); install it on "
                          "every node and set ray.ship_code: false")
    return module.__file__


def shipped_modules() -> list[str]:
    """The directories `py_modules` uploads: dialectbias, then `SHIPPED`."""
    import dialectbias

    paths = [module_path(dialectbias)]
    for name in SHIPPED:
        try:
            paths.append(module_path(importlib.import_module(name)))
        except ImportError:  # an optional speed-up missing here is missing on the workers too: nothing to ship
            continue
    return paths


def runtime_env() -> dict[str, Any]:
    """The job's `runtime_env`: the package and its missing dependencies as `py_modules` (caches and
    compiled bytecode left out)."""
    return {"py_modules": shipped_modules(), "excludes": ["__pycache__", "*.pyc"]}


def host_port(address: str) -> tuple[str, int] | None:
    """`(host, port)` of a `ray.address` (`HOST:PORT` or `ray://HOST:PORT`); None for `auto`/`local`, whose
    place Ray looks up itself."""
    rest = address.removeprefix("ray://")
    if rest in ("auto", "local") or ":" not in rest:
        return None
    host, _, port = rest.rpartition(":")
    if not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, where: str) -> None:
    """Raise one clear ConfigError when nothing listens at `address` (within `CONNECT_TIMEOUT_S`)."""
    target = host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise ConfigError(f"{where}: cannot reach the Ray cluster at {address!r} ({reason}); start it with "
                          "`ray start --head` or fix ray.address") from None
