"""Where a run came from: git, the host (only as a hash), the dependency lock."""
