"""The scoring engine: a ledger's sessions -> evaluation records, through one measurement."""
