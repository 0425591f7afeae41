"""The service's store: one module per resource, owning its tables, its queries and
the row -> model mapping. Routes validate, call the store inside a transaction
(`Database.read()` / `Database.write()`), and answer; no SQL outside this package.
Schema changes are numbered migration steps (`migrations/`)."""
