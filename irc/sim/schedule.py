"""When each command of a stream runs: a discrete-event schedule of the engine queues.

Each queue runs its items in program order: commands (each `cycles` long), signals
(which set a token when the queue reaches them) and waits (which hold the queue
until the token is set, and `cycles` more: the latency of a token from another
core). A DMA command first waits its memories' latency, then its
data phase needs every port it moves data through (`ports`: the cycles it needs
each); a port serves one transfer at a time, in the order the transfers ask for it,
and the data phase starts when all its ports are free and lasts as long as its
longest port's share. The schedule advances the queue that can act earliest, so
ports are granted in time order (first come, first served) whatever the program
order of the queues' commands.
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
    """Of a command, its cycles; of a wait, the latency from its token's signal (a
    token from another core)."""
    ports: tuple[tuple[str, int], ...] = ()
    """Of a DMA: the cycles its data phase needs each port it uses (the longest is the
    data phase; the rest of `cycles` is latency)."""
    token: int = -1
    start: int = 0
    end: int = 0

    @property
    def data(self) -> int:
        """The cycles of the data phase."""
        return max((cycles for _, cycles in self.ports), default=0)


def schedule(queues: Sequence[Sequence[Item]]) -> int:
    """Set every command item's `start` and `end`; returns the last end.

    Every wait's token is set by a signal somewhere in the queues (the simulator
    checks this in program order before scheduling).
    """
    ready = [0] * len(queues)
    position = [0] * len(queues)
    tokens: dict[int, int] = {}
    blocked: dict[int, list[int]] = {}
    port_free: dict[str, int] = {}
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
            time = max(time, tokens[item.token] + item.cycles)
        elif item.kind == "command" and item.ports:
            time += item.cycles - item.data  # the moment it asks for its ports
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
            if item.ports:
                data_start = max(time, *(port_free.get(port, 0) for port, _ in item.ports))
                for port, cycles in item.ports:
                    port_free[port] = data_start + cycles
                item.end = data_start + item.data
            else:
                item.end = item.start + item.cycles
            ready[queue] = item.end
            end = max(end, item.end)
        candidate(queue)
    return end
