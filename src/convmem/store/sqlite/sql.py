"""SQL shared by the SQLite mixins."""

# The path from a message towards the root, at most ``limit`` messages, as (id, n) with n = 0 at
# the start. Parameters: start id, tenant, limit.
CHAIN_CTE = """
    WITH RECURSIVE chain(id, n) AS (
        SELECT ?, 0
        UNION ALL
        SELECT m.parent_id, chain.n + 1 FROM chain
        JOIN messages m ON m.tenant_id = ? AND m.id = chain.id
        WHERE m.parent_id IS NOT NULL AND chain.n + 1 < ?
    )
"""
