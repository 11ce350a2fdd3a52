"""When each command of a stream runs: a discrete-event schedule of the engine queues.

Each queue runs its items in program order: commands (each `cycles` long), signals
(which set a token when the queue reaches them) and waits (which hold the queue
until the token is set). A DMA command first waits its DDR latency, then its data
phase (`data` cycles) needs the DDR, which serves one transfer at a time, in the
order the transfers ask for it. The schedule advances the queue that can act
earliest, so the DDR is granted in time order (first come, first served) whatever
the program order of the queues' commands.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Item:
    """One entry of a queue: a command, a signal or a wait."""

    kind: str
    """"command", "signal" or "wait"."""
    cycles: int = 0
    data: int = 0
    """Of a DMA: the cycles its data phase needs the DDR (the rest is latency)."""
    token: int = -1
    start: int = 0
    end: int = 0


def schedule(queues: Sequence[Sequence[Item]]) -> int:
    """Set every command item's `start` and `end`; returns the last end.

    Every wait's token is set by a signal somewhere in the queues (the simulator
    checks this in program order before scheduling).
    """
    ready = [0] * len(queues)
    position = [0] * len(queues)
    tokens: dict[int, int] = {}
    blocked: dict[int, list[int]] = {}
    bus_free = 0
    heap: list[tuple[int, int]] = []

    def candidate(queue: int) -> None:
        """Put the queue's next item on the heap at the time it can act (or block it
        on its wait's token)."""
        if position[queue] >= len(queues[queue]):
            return
        item = queues[queue][position[queue]]
        time = ready[queue]
        if item.kind == "wait":
            if item.token not in tokens:
                blocked.setdefault(item.token, []).append(queue)
                return
            time = max(time, tokens[item.token])
        elif item.kind == "command" and item.data:
            time += item.cycles - item.data  # the moment it asks for the DDR
        heapq.heappush(heap, (time, queue))

    for queue in range(len(queues)):
        candidate(queue)
    end = 0
    while heap:
        time, queue = heapq.heappop(heap)
        item = queues[queue][position[queue]]
        position[queue] += 1
        if item.kind == "wait":
            ready[queue] = max(ready[queue], time)
        elif item.kind == "signal":
            tokens[item.token] = ready[queue]
            for waiting in blocked.pop(item.token, []):
                candidate(waiting)
        else:
            item.start = ready[queue]
            if item.data:
                data_start = max(time, bus_free)
                bus_free = data_start + item.data
                item.end = bus_free
            else:
                item.end = item.start + item.cycles
            ready[queue] = item.end
            end = max(end, item.end)
        candidate(queue)
    return end
