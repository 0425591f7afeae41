"""`agentform webhook …`: the tools for the receiving end of webhook deliveries —
`verify` a saved delivery, `listen` as a local receiver, `test` an integration."""
