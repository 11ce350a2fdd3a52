"""irc: an MLIR-style multi-level compiler for NPUs, on xDSL (see README.md and docs/)."""

__version__ = "0.1.0"
"""The compiler's version: recorded in every package's manifest (pyproject reads it)."""
