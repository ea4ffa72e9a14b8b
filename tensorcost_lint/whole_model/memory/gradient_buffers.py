"""The engine's gradient buffers of tensors read in parts (index_memory.PartialRead), for the
backward's liveness (memory_peak).

Reading part of a tensor (`deltaA[:, :, i]` in a scan loop, `x[..., :h]` in rotate_half) has a
backward that makes a zero tensor of the whole tensor's size and copies the part's gradient in.
torch's engine keeps the first such gradient in the input buffer of the node that made the
tensor and sums each later one into it out of place (`old + new`): at that moment the old sum, the
new zero-filled gradient and their sum are live, then the sum alone. The buffer is the gradient
that flows into the tensor's maker, which already counts it as its incoming gradient; it is live
from the first read's backward (the last read in forward order) until then. A tensor whose maker
is no node of the backward (a view of the entry's input) keeps its buffer to the end of the
backward, an upper bound."""

from __future__ import annotations

from bisect import bisect_left


class GradientBuffers:
    """The reads of the walk, by position: `reads[n]` lists the PartialReads made after the
    backward's node n-1 and before node n in forward order (so in the backward, after node n)."""

    def __init__(self) -> None:
        self.reads: dict = {}  # position -> [((token of the tensor's storage, its identity), bytes)]
        self.makers: dict = {}  # token -> sorted indices of the nodes that made it
        self.live: dict = {}  # key -> bytes of its buffer
        self.total = 0
        self.release_at: dict = {}  # node index -> keys whose buffer flows into that node

    def read(self, position: int, key, size: int) -> None:
        self.reads.setdefault(position, []).append((key, size))

    def made(self, index: int, token) -> None:
        self.makers.setdefault(token, []).append(index)

    def before(self, index: int) -> None:
        """Node `index` is about to run: the buffers it receives become its incoming gradient."""
        for key in self.release_at.pop(index, ()):
            self.total -= self.live.pop(key)

    def after(self, position: int, live_without: int) -> int:
        """The reads' backward after node `position` (before the next); `live_without`: what else is
        live then. The most live at one moment of it (0 when there is none)."""
        best = 0
        for key, size in self.reads.get(position, ()):
            if key in self.live:  # the new gradient and the sum, beside the old buffer
                best = max(best, live_without + self.total + 2 * size)
                continue
            best = max(best, live_without + self.total + size)
            self.live[key] = size
            self.total += size
            makers = self.makers.get(key[0], ())  # the makers of its storage
            made = bisect_left(makers, position) - 1  # its maker: the last node before the read
            if made >= 0:
                self.release_at.setdefault(makers[made], []).append(key)
        return best
