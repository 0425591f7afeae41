"""Views of a Plan, an apply report and a drift report: text (terminal), markdown, JSON."""
