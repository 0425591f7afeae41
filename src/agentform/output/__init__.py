"""Views of a Plan and of an apply report: text (terminal) and JSON."""
