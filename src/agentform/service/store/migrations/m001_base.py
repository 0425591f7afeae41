"""001: the base schema, as release 0.1 made it (organizations, keys, agents, profiles,
pools and groups with members, vault templates).

A database written by release 0.1 has these tables and no schema_version table;
it is recognised as being at version 1 (see `migrations.upgrade`).
"""

TABLES = (
    "organizations",
    "api_keys",
    "agents",
    "profiles",
    "profile_sets",
    "profile_set_members",
    "vault_templates",
)

SQL = """
CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'read')),
    revoked INTEGER NOT NULL DEFAULT 0,
    UNIQUE (organization_id, name)
);
CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    published_version INTEGER NOT NULL,
    versions TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
);
CREATE INDEX agents_order ON agents (organization_id, created_at, id);
CREATE TABLE profiles (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
);
CREATE INDEX profiles_order ON profiles (organization_id, created_at, id);
-- Agent profile pools and profile groups: two collections of the same shape.
CREATE TABLE profile_sets (
    id TEXT PRIMARY KEY,
    collection TEXT NOT NULL CHECK (collection IN ('pool', 'group')),
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    selection_strategy TEXT NOT NULL,
    allow_concurrent_use INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (collection, organization_id, name)
);
CREATE INDEX profile_sets_order
    ON profile_sets (collection, organization_id, created_at, id);
CREATE TABLE profile_set_members (
    set_id TEXT NOT NULL REFERENCES profile_sets(id) ON DELETE CASCADE,
    profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    PRIMARY KEY (set_id, profile_id)
) WITHOUT ROWID;
CREATE INDEX profile_set_members_profile ON profile_set_members (profile_id);
CREATE TABLE vault_templates (
    id TEXT PRIMARY KEY,
    organization_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    fields TEXT NOT NULL,
    steps TEXT NOT NULL,
    origin TEXT NOT NULL CHECK (origin IN ('manual', 'generated')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
);
CREATE INDEX vault_templates_order
    ON vault_templates (organization_id, created_at, id);
"""
