"""`python -m agentform`: the command line."""

from .cli.main import main

main()
