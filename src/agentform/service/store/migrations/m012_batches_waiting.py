"""012: the batches that have items awaiting capacity, by organization.

When an execution of an organization ends, the batch scheduler asks whether the
organization has items waiting before it schedules a fill (batches/scheduler.py):
this index answers from the batches with any, so an organization with many
finished batches, or none, pays one lookup, whatever other organizations wait for.
"""

SQL = """
CREATE INDEX execution_batches_waiting ON execution_batches (organization_id)
    WHERE awaiting_capacity_count > 0;
"""
