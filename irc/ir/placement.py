"""Where an op runs, as the IR records it: the attributes `partition` writes.

- `irc.device = "npu"` or `"cpu"` on an op (or on a function: every op in it, as an
  outlined NPU function, or a host function of the command stream);
- `irc.reason = "..."` on an op `partition` put on the CPU: its reasons, `; `-separated
  (from the target's support table, its data types, irc's lowering, or the cost model);
- `irc.float = "..."` on a float op of a quantized module: why the quantizer left it
  float (recorded by `quantize` and `lower-to-qnn`).

What decides placement is the backend table (irc/backend: `place`, `device_of`); this
module only names what it records, below every pass that reads it.
"""

from __future__ import annotations

from typing import Final

DEVICE_ATTR = "irc.device"
"""The attribute that says where an op (or every op of a function) runs."""

REASON_ATTR = "irc.reason"
"""The attribute that says why an op runs on the CPU."""

FLOAT_REASON_ATTR = "irc.float"
"""The attribute that says why the quantizer left an op float."""

NPU: Final = "npu"
CPU: Final = "cpu"
