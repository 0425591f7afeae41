"""agentform: manage an Agent Service workspace as code."""

__version__ = "0.1.0"
