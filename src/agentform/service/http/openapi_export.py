"""`python -m agentform.service.http.openapi_export FILE`: write the service's OpenAPI document."""

import sys

from agentform.service.http.openapi import write_openapi

if __name__ == "__main__":
    write_openapi(sys.argv[1] if len(sys.argv) > 1 else "schemas/agent-service.openapi.json")
