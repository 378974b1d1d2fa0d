"""The session-eval record (SPEC section 2): contract, seal, dimensions, calibration status."""
