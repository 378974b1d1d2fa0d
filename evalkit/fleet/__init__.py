"""A fleet of metrics directories scored as one, one task per directory, on Dask or serially."""
