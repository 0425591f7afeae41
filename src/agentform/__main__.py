"""`python -m agentform`: the command line."""

from agentform.cli.start import run

run()
