"""The service's own upkeep: forgetting old history (retention)."""
