"""Code generation: the command level as bytes.

- `bytecode.py`: irc bytecode, the binary encoding of a module (the command stream
  and its host functions) with the weights blob beside it;
- `package.py`: the model package directory (manifest, program, weights, target) that
  `irc-compile` writes and `irc.runtime.Session` loads.

docs/package.md describes both formats.
"""
