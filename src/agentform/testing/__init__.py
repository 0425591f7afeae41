"""`agentform test`: behavioural tests of a workspace, run on the embedded service.

A test file (model.py, read by parse.py and files.py) names a seed and its
tests; the runner (runner.py) gives each test a fresh in-process service on a
manual clock (session.py), applies the workspace with the engine, and runs its
steps (steps.py, advancing.py) and expectations (expectations.py,
deliveries.py, explain.py) against it, webhooks landing in in-process receivers
(receivers.py). The views (report.py) render the results.
"""
