"""The ground floor: what every other package may import, and which imports nothing
else of agentform — the exception tree, diagnostics, did-you-mean and rule errors,
counted words, frozen values, GC pausing, YAML with positions, sensitive values and
the run's registry of secrets that scrubs them from text."""
