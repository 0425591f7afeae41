"""The engine: diff desired against live into a Plan, order it, execute it. Never prints."""
