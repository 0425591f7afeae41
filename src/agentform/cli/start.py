"""The program's entry point (`agentform`, `python -m agentform`): the cyclic
collector is paused before the command line's own modules are imported, click's
included (core/gcpause.py), then `main()` runs the command. Importing
`agentform.cli.main` first, as the entry point did, ran about 20 collections
over those modules before `main()` could pause it."""

from __future__ import annotations

from agentform.core.gcpause import pause_start_up


def run() -> None:
    pause_start_up()
    from agentform.cli.main import main  # here: after the pause

    main()
