"""Enumerations of API.md shared by both halves: the service enforces them, the
provisioner's file format offers them. A change here is a change to the contract.

The vault template enumerations live with the template rules
(`rules/vault_templates.py`); they are named here too for older imports."""

from typing import Literal

from .rules.vault_templates import FieldType, TemplateKind

SelectionStrategy = Literal["least_recently_used", "most_recently_used"]

__all__ = ["FieldType", "SelectionStrategy", "TemplateKind"]
