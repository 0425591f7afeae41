"""One exception tree (core/errors.py): every exception agentform defines is an
`AgentformError`, so each boundary (the command line, apply, the service's error
handlers) translates one family, and a new one cannot slip out as a traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import agentform
from agentform.core.errors import AgentformError

# Exceptions that must be of a library's own family, raised and caught inside it.
OUTSIDE = {
    # starlette's multipart parser turns only its own MultiPartException into a
    # refusal; routes/temp_files.py catches it in the same function.
    "agentform.service.routes.temp_files._FileTooLarge",
    # FastAPI passes only an HTTPException through its body reading unchanged;
    # service/errors.py's handler answers it with the error body.
    "agentform.service.errors.RefusedBody",
    # raised inside httpcore's connection, which httpx turns into its ConnectError
    # only when it is httpcore's own; delivery/sender.py reads the reason from it.
    "agentform.service.delivery.connecting.Unreachable",
}


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of agentform, by dotted name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(agentform.__path__, "agentform."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_agentform_defines_is_in_the_one_tree() -> None:
    exceptions = defined_exceptions()
    assert "agentform.service.errors.ServiceError" in exceptions  # it reads them all
    outside = {name for name, cls in exceptions.items() if not issubclass(cls, AgentformError)}
    assert outside == OUTSIDE


def test_service_only_errors_live_in_the_service() -> None:
    """Nothing in core/ is about the embedded service alone."""
    from agentform.core import errors

    assert not hasattr(errors, "MigrationError")
    assert not hasattr(errors, "PortInUse")
