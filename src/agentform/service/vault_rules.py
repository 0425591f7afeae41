"""The service's side of the vault template rules: the shared rules
(`agentform.rules.vault_templates`) turned into a 400 naming every field at fault."""

from __future__ import annotations

from collections.abc import Sequence

from agentform.rules.vault_templates import StepLike, field_key, template_problems
from agentform.service.errors import bad_request
from agentform.service.models.vault_templates import TemplateField, TemplateFieldIn


def build_template(
    fields: Sequence[TemplateFieldIn | TemplateField], steps: Sequence[StepLike]
) -> list[TemplateField]:
    """The fields with their derived keys; ServiceError 400 listing every problem."""
    problems = template_problems([f.label for f in fields], steps)
    if problems:
        raise bad_request(problems)
    return [
        TemplateField(
            type=f.type, label=f.label, required=f.required, hint=f.hint, key=field_key(f.label)
        )
        for f in fields
    ]
