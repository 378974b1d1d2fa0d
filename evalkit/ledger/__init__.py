"""Reading a metrics directory exactly as the reference engine does: files, lines, sources."""
