"""The service's wire models: what each operation takes and answers, one module per resource.

The bottom of the service: these modules import only pydantic, `agentform.core`
and `agentform.rules` (the contract both halves enforce), so the store, the
routes and the runtime can all use them. Request bodies derive from
`base.Request` (strict, unknown fields refused).
"""
