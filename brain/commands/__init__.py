"""One module per command: each returns data and never prints."""
