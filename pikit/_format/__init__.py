"""The file as Pi writes it: reading, numbered lines to entries, loading, appended lines, writing."""
