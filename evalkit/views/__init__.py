"""Rebuildable views of the journal: the one-record HTML report."""
