"""The IR core shared by every tool: contexts, parsing, printing, verification, weights."""
