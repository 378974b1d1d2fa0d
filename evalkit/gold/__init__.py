"""Frozen, content-hashed gold sets: load, hash, freeze."""
