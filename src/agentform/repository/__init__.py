"""A repository of workspaces as one unit: its pairs (workspace x environment),
validated and listed together, and the pairs a change affects."""
