"""Entries as a tree, and how it grows: SessionTree, paths and /tree rows, ancestry, refresh, fork."""
