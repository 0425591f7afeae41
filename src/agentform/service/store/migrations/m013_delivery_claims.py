"""013: claims on jobs, so processes sharing the database split the I/O work.

A delivery worker process (service/delivery/worker.py) claims the jobs it runs:
`claimed_by` names it and `lease_until` (real time, UTC) says how long the claim
holds unless renewed; a claim whose lease has run out is free to take again.
`shared_clock` holds a manual clock's instant, written by the process that moves
it and read by the workers (docs/service/internals.md#scaling).
"""

SQL = """
ALTER TABLE jobs ADD COLUMN claimed_by TEXT;
ALTER TABLE jobs ADD COLUMN lease_until TEXT;
CREATE INDEX jobs_claimed ON jobs (claimed_by, lease_until)
    WHERE claimed_by IS NOT NULL AND status = 'pending';
CREATE TABLE shared_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    instant TEXT NOT NULL
);
"""
