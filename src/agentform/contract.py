"""Enumerations of API.md shared by both halves: the service enforces them, the
provisioner's file format offers them. A change here is a change to the contract."""

from typing import Literal

SelectionStrategy = Literal["least_recently_used", "most_recently_used"]
TemplateKind = Literal["login", "api_key", "card", "custom"]
FieldType = Literal[
    "username",
    "email",
    "url",
    "phone",
    "text",
    "password",
    "hidden",
    "totp_seed",
    "api_key",
    "card_number",
    "card_expiry",
    "card_cvv",
    "cardholder_name",
]
