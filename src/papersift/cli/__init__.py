"""The `papersift` command: a thin wrapper that calls one library function per command."""
