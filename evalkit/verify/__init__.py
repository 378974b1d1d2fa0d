"""Offline re-verify of one record or a whole journal, with every difference classified."""
