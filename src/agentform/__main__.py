"""`python -m agentform`: the command line."""

from agentform.cli.main import main

main()
