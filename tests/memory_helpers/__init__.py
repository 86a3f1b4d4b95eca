"""Helper scripts that the memory tests run as real subprocesses."""
