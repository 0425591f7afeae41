"""Where the Agent Service answers: the paths and the port both halves name.

The API is served under `API_PATH` (an endpoint is `<root>/agents/v2`);
agentform's own operations (the clock, deliveries, routing: docs/service/
own-operations.md) under `OWN_PATH`, beside it on the same server.
"""

API_PATH = "/agents/v2"
OWN_PATH = "/agentform/v1"
UNKNOWN_PATH = "no such operation"
"""The message of the service's 404 for a path it does not serve: the client tells it
from a 404 about a missing object, which gets no hint about the endpoint."""
DEFAULT_PORT = 8700
"""The port `agentform service run` takes unless told otherwise."""
