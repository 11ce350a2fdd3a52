"""Reading constants generically: the data of a value that a constant op defines.

A tensor constant is an op with xDSL's `ConstantLike` trait whose `value` property is
the dense tensor its result holds (`nn.constant`). A constant whose stored value has
another type than its result (`qnn.constant`: storage integers of a quantized type)
is not one; neither is one whose weights were elided from the text it was parsed
from. Knowing no dialect, passes at any level and the rewrite rules share it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation, SSAValue
from xdsl.traits import ConstantLike

from irc.ir import weights


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The data of a value defined by a tensor constant with data, else `None`."""
    owner = value.owner
    if not isinstance(owner, Operation) or not owner.has_trait(ConstantLike):
        return None
    data = owner.properties.get("value")
    if not isinstance(data, DenseIntOrFPElementsAttr) or data.type != value.type:
        return None
    return weights.numpy_from_dense(data)
