"""The pre-registration lock, its history, study parameters and the gold folder's verify."""
