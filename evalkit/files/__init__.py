"""Files a user names: bounded readers, their errors, all-or-nothing appends, escaping, labels."""
