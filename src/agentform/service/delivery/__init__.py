"""Webhook delivery: notification bodies, the signed POST, and the outbox that drives them."""
