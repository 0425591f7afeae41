"""Policies: rules in CEL that judge a plan (policies/*.yaml), compiled once when
their files are loaded, evaluated over every change and over the whole plan, and
their own tests (`agentform policy test`). See docs/guide/policies.md."""
