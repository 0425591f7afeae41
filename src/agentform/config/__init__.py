"""Workspace loading: find files, render Jinja2, parse YAML with positions, validate."""
