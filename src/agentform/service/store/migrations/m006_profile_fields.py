"""006: the public SDK's profile fields: tracing, sticky IP, inbox, credentials, cookies.

Profiles answer what the public service's SDK (asteroid-odyssey) requires
(docs/service/contract.md#agents-and-profiles). A description is a string: a missing one
becomes "". The inbox address is stored only when a prefix was given; otherwise it is
derived from the id when read. Agents' `userId` and /context's user are derived from the
organization (its service user), so they need no column.
"""

SQL = """
ALTER TABLE profiles ADD COLUMN tracing_enabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN sticky_ip INTEGER NOT NULL DEFAULT 0;
ALTER TABLE profiles ADD COLUMN inbox_email TEXT;
ALTER TABLE profiles ADD COLUMN credentials TEXT NOT NULL DEFAULT '[]';
ALTER TABLE profiles ADD COLUMN cookies TEXT NOT NULL DEFAULT '[]';
UPDATE profiles SET description = '' WHERE description IS NULL;
"""
