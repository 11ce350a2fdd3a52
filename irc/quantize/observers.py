"""Observers: what calibration learns about a tensor, and the range it calibrates.

An observer sees every sample's value of one tensor (`observe`) and at the end gives
the range [low, high] that the tensor's int8 type will cover (`calibrated_range`). The
quantization scheme then extends the range to contain 0 and derives the scale and zero
point from it (irc/quantize/scheme.py). The observers:

- `minmax`: the smallest and largest value seen over all samples.
- `moving-average`: the minimum and maximum of each sample, averaged with momentum:
  `low = momentum * low + (1 - momentum) * sample_min` (the first sample sets it), and
  the same for `high`. With momentum 0.9 the last ten samples weigh 65%. onnxruntime's
  `averaging_constant` c is `1 - momentum`. It ignores rare extremes that `minmax`
  keeps, and depends on the order of the samples.
- `percentile`: two-sided percentiles of all values: for `percentile=99.99`, low is
  the 0.01th and high the 99.99th percentile, read from the histogram (linear
  interpolation inside a bin).
- `entropy`: the range whose 256-level quantization loses the least information, by
  TensorRT's KL-divergence criterion adapted to asymmetric int8 (see
  `entropy_range`).
- `mse`: the range that minimises the expected squared error of quantizing the
  histogram's values: rounding error `step^2 / 12` for values inside, the squared
  distance to the bound for values clipped (see `mse_range`).

The last three keep a `Histogram` of all values, merged sample by sample: memory is
the histogram's (at most `bins` counts), whatever the number of samples, and the
merged histogram is exactly the one of all values at once, in any order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

DEFAULT_BINS = 2048
"""The most bins a histogram holds (the range it covers spans between half and all
of them)."""

DEFAULT_PERCENTILE = 99.99
"""The `percentile` observer's default: clip 0.01% of the values on each side."""

DEFAULT_MOMENTUM = 0.9
"""The `moving-average` observer's default momentum."""

QUANTIZATION_LEVELS = 256
"""The values an int8 activation takes: the levels `entropy` and `mse` quantize to."""

FLOAT32_MANTISSA_BITS = 24
"""Bins narrower than a float32 ulp of the largest magnitude would separate nothing."""


# --------------------------------------------------------------------------------------
# Histograms that merge exactly


def _bin_count(low: float, high: float, exponent: int) -> int:
    # Scaling by a power of two with ldexp stays exact (and finite) for the subnormal
    # ranges of float64 data, where 2^-exponent itself overflows.
    return math.floor(math.ldexp(high, -exponent)) - math.floor(math.ldexp(low, -exponent)) + 1


def bin_exponent(low: float, high: float, max_bins: int) -> int:
    """The bin width 2^e for values in [low, high]: the smallest e whose bins, aligned
    to multiples of 2^e, cover the range with at most `max_bins` bins.

    e is at least the float32 ulp exponent of max(|low|, |high|), so a constant tensor
    gets one bin of a width that depends on its value only. The bin count does not
    grow with e, and e grows with the range: the exponent of a union of ranges is at
    least that of each.
    """
    magnitude = max(abs(low), abs(high))
    floor_exponent = math.frexp(magnitude)[1] - FLOAT32_MANTISSA_BITS
    span = high - low
    if span <= 0:
        return floor_exponent
    exponent = max(floor_exponent, math.frexp(span / max_bins)[1] - 1)
    while _bin_count(low, high, exponent) > max_bins:
        exponent += 1
    while exponent > floor_exponent and _bin_count(low, high, exponent - 1) <= max_bins:
        exponent -= 1
    return exponent


def _bin_indices(values: np.ndarray, exponent: int) -> np.ndarray:
    """floor(values / 2^exponent) for float values, exactly.

    Multiplying by a power of two is exact unless the product overflows or becomes
    subnormal, so every value lands in the same bin however the histogram was built.
    float32 data is scaled in float32 when 2^-exponent is a normal float32 >= 1 (the
    products are then at most 2^25 in magnitude); anything else in float64.
    """
    if values.dtype in (np.float16, np.float32) and -127 < exponent <= 0:
        scaled = values.astype(np.float32) * np.float32(math.ldexp(1.0, -exponent))
    else:
        scaled = np.ldexp(values.astype(np.float64), -exponent)
    np.floor(scaled, out=scaled)
    return scaled.astype(np.int64)


@dataclass
class Histogram:
    """Counts of values in bins of width 2^`exponent`: bin i holds [i * 2^e, (i+1) * 2^e).

    `counts[j]` is bin `first + j`; `low` and `high` are the exact extremes of the values
    and `zeros` counts the values equal to 0 (which quantize without error). Bins are
    aligned to multiples of their width, and a coarser width is a power-of-two multiple
    of a finer one, so two histograms merge exactly: both are coarsened to the width
    their union range needs and added. The result equals the histogram of all values
    at once, whatever the order in which they came.
    """

    max_bins: int
    exponent: int = 0
    first: int = 0
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    low: float = math.inf
    high: float = -math.inf
    zeros: int = 0

    @property
    def total(self) -> int:
        """How many values were counted."""
        return int(self.counts.sum())

    @property
    def width(self) -> float:
        """The width of a bin."""
        return math.ldexp(1.0, self.exponent)

    @property
    def empty(self) -> bool:
        """True before any value was counted."""
        return self.low > self.high

    def edges(self) -> np.ndarray:
        """The len(counts) + 1 bin edges."""
        return (np.arange(self.first, self.first + self.counts.size + 1) * self.width).astype(
            np.float64
        )

    def coarsened(self, exponent: int) -> Histogram:
        """The same values in bins of width 2^exponent (exponent >= self.exponent)."""
        assert exponent >= self.exponent, "a histogram cannot be refined"
        if exponent == self.exponent or self.empty:
            return Histogram(
                self.max_bins,
                exponent,
                self.first,
                self.counts.copy(),
                self.low,
                self.high,
                self.zeros,
            )
        shift = exponent - self.exponent
        # floor(floor(x / w) / 2^k) == floor(x / (w 2^k)): an arithmetic right shift.
        indices = np.arange(self.first, self.first + self.counts.size, dtype=np.int64) >> shift
        first = int(indices[0])
        counts = np.bincount(indices - first, weights=self.counts).astype(np.int64)
        return Histogram(self.max_bins, exponent, first, counts, self.low, self.high, self.zeros)

    def add(self, values: np.ndarray) -> None:
        """Count the finite values of `values` (NaNs and infinities are ignored)."""
        flat = np.asarray(values).reshape(-1)
        if flat.size == 0:
            return
        low, high = float(flat.min()), float(flat.max())
        if not (math.isfinite(low) and math.isfinite(high)):
            flat = flat[np.isfinite(flat)]
            if flat.size == 0:
                return
            low, high = float(flat.min()), float(flat.max())
        self.add_finite(flat, low, high)

    def add_finite(self, flat: np.ndarray, low: float, high: float) -> None:
        """Count `flat`, a 1-D array of finite values whose extremes are `low`, `high`."""
        exponent = self._exponent_with(low, high)
        indices = _bin_indices(flat, exponent)
        first = math.floor(math.ldexp(low, -exponent))  # exact, as the indices
        indices -= first
        counts = np.bincount(indices).astype(np.int64)
        zeros = int(np.count_nonzero(flat == 0))
        self._merge_counts(first, counts, low, high, zeros)

    def merge(self, other: Histogram) -> None:
        """Add the values of `other` (exactly: see the class docstring)."""
        if other.empty:
            return
        exponent = self._exponent_with(other.low, other.high)
        theirs = other.coarsened(exponent)
        self._merge_counts(theirs.first, theirs.counts, other.low, other.high, other.zeros)

    def _exponent_with(self, low: float, high: float) -> int:
        return bin_exponent(min(self.low, low), max(self.high, high), self.max_bins)

    def _merge_counts(
        self, first: int, counts: np.ndarray, low: float, high: float, zeros: int
    ) -> None:
        """Add counts that are in bins of the width the union of the ranges needs."""
        exponent = self._exponent_with(low, high)
        if self.empty:
            self.exponent, self.first, self.counts = exponent, first, counts
        else:
            mine = self.coarsened(exponent)
            start = min(mine.first, first)
            stop = max(mine.first + mine.counts.size, first + counts.size)
            merged = np.zeros(stop - start, np.int64)
            merged[mine.first - start : mine.first - start + mine.counts.size] += mine.counts
            merged[first - start : first - start + counts.size] += counts
            self.exponent, self.first, self.counts = exponent, start, merged
        self.low, self.high = min(self.low, low), max(self.high, high)
        self.zeros += zeros

    def covering_zero(self) -> Histogram:
        """The histogram padded with empty bins so that it reaches 0 (and coarsened
        until that fits in `max_bins`): 0 is then one of its edges."""
        exponent = self.exponent
        while True:
            shifted = self.coarsened(exponent)
            start = min(shifted.first, 0)
            stop = max(shifted.first + shifted.counts.size, 0)
            if stop - start <= self.max_bins or stop - start <= 1:
                break
            exponent += 1
        counts = np.zeros(stop - start, np.int64)
        counts[shifted.first - start : shifted.first - start + shifted.counts.size] = shifted.counts
        return Histogram(self.max_bins, exponent, start, counts, self.low, self.high, self.zeros)

    # ---- JSON ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (exact: integers and float64 extremes)."""
        return {
            "bin_width_log2": self.exponent,
            "first_bin": self.first,
            "counts": [int(c) for c in self.counts],
            "zeros": self.zeros,
        }

    @staticmethod
    def from_json(data: dict[str, Any], low: float, high: float, max_bins: int) -> Histogram:
        """The histogram `to_json` wrote; `low`/`high` are the tensor's extremes."""
        return Histogram(
            max_bins,
            int(data["bin_width_log2"]),
            int(data["first_bin"]),
            np.asarray(data["counts"], dtype=np.int64),
            low,
            high,
            int(data["zeros"]),
        )


# --------------------------------------------------------------------------------------
# Ranges from a histogram


def percentile_range(histogram: Histogram, percentile: float) -> tuple[float, float]:
    """The two-sided percentile range: the (100 - p)th and the pth percentile.

    A percentile is read from the cumulative counts, interpolating linearly inside the
    bin where it falls (values are taken as spread evenly over their bin), and kept
    within the observed [low, high].
    """
    counts = histogram.counts.astype(np.float64)
    cumulative = np.cumsum(counts)
    total = cumulative[-1]
    edges = histogram.edges()

    def quantile(fraction: float) -> float:
        target = fraction * total
        index = int(np.searchsorted(cumulative, target, side="left"))
        index = min(index, counts.size - 1)
        before = cumulative[index - 1] if index > 0 else 0.0
        spread = counts[index]
        if histogram.first + index == 0:
            # The values exactly 0 sit at the bin's left edge, the others spread over it.
            if target - before <= histogram.zeros:
                return min(max(0.0, histogram.low), histogram.high)
            before, spread = before + histogram.zeros, spread - histogram.zeros
        inside = (target - before) / spread if spread > 0 else 0.0
        value = edges[index] + histogram.width * min(max(inside, 0.0), 1.0)
        return min(max(value, histogram.low), histogram.high)

    return quantile(1.0 - percentile / 100.0), quantile(percentile / 100.0)


def _smooth(distribution: np.ndarray, epsilon: float = 1e-4) -> np.ndarray:
    """MXNet's `_smooth_distribution`: give empty bins `epsilon`, taken from the others
    (so that KL(p || q) stays finite where q is 0)."""
    empty = distribution == 0
    empty_count = int(np.count_nonzero(empty))
    filled_count = distribution.size - empty_count
    if filled_count == 0:
        return distribution
    taken = epsilon * empty_count / filled_count
    return distribution + np.where(empty, epsilon, -taken)


def _kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) of two unnormalised distributions over the same bins (as scipy's
    `entropy(p, q)`)."""
    if not (p.sum() > 0 and q.sum() > 0):
        return math.inf
    p, q = p / p.sum(), q / q.sum()
    mask = p > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = p[mask] * np.log(p[mask] / q[mask])
    return float(np.sum(terms)) if np.all(np.isfinite(terms)) else math.inf


def clipping_divergence(
    counts: np.ndarray, start: int, stop: int, levels: int = QUANTIZATION_LEVELS
) -> float:
    """TensorRT's information loss of clipping the histogram to bins [start, stop) and
    quantizing them to `levels` values.

    The reference P is the bins in [start, stop) with the values outside added to the
    first and last of them (clipping moves them there). The candidate Q quantizes the
    bins in [start, stop) without the outliers: bin j belongs to level
    floor(j * levels / n), and each level's count is spread evenly over its bins where
    P is not empty. Both are smoothed (MXNet's epsilon) and KL(P || Q) is returned.
    """
    sliced = counts[start:stop].astype(np.float64)
    size = sliced.size
    reference = sliced.copy()
    reference[0] += counts[:start].sum()
    reference[-1] += counts[stop:].sum()
    nonzero = reference != 0
    level_of_bin = (np.arange(size) * levels) // size
    level_sums = np.bincount(level_of_bin, weights=sliced, minlength=levels)
    level_bins = np.bincount(level_of_bin, weights=nonzero, minlength=levels)
    spread = np.divide(level_sums, level_bins, out=np.zeros_like(level_sums), where=level_bins > 0)
    candidate = np.where(nonzero, spread[level_of_bin], 0.0)
    return _kl_divergence(_smooth(reference), _smooth(candidate))


ENTROPY_CANDIDATES = 128
"""How many positions of each bound `entropy_range` tries in one sweep."""


def _edge_value(histogram: Histogram, edge: int) -> float:
    return (histogram.first + edge) * histogram.width


def _clamp_to_observed(histogram: Histogram, low: float, high: float) -> tuple[float, float]:
    return max(low, histogram.low), min(high, histogram.high)


def entropy_range(
    histogram: Histogram,
    levels: int = QUANTIZATION_LEVELS,
    candidates: int = ENTROPY_CANDIDATES,
) -> tuple[float, float]:
    """The clipping range of least KL divergence (TensorRT's entropy calibration),
    adapted to asymmetric int8.

    TensorRT histograms |x| in 2048 bins and tries thresholds t from bin 128 to 2048,
    keeping the one whose 128-level quantization of [0, t] has the least
    `clipping_divergence`. Asymmetric int8 quantizes [low, high] (which contains 0)
    into 256 levels, so both bounds move. The histogram of the signed values (up to
    2048 bins, padded to reach 0, so that 0 is a bin edge) is searched over bin edges
    on either side of 0, keeping at least `levels` bins:

    1. both bounds shrink together towards 0, by the same fraction of their extent
       (TensorRT's sweep when the tensor is symmetric, and exactly it for a tensor
       that is never negative, as after a ReLU);
    2. then the high bound moves alone, then the low bound alone (coordinate descent),
       so a tensor with one long tail is clipped on that side only.

    Each sweep tries up to `candidates` evenly spaced positions; ties keep the wider
    range.
    """
    if histogram.empty:
        return 0.0, 0.0
    padded = histogram.covering_zero()
    counts = padded.counts
    size = counts.size
    zero_edge = -padded.first  # 0 is edge number zero_edge of the padded histogram
    if size < levels:
        return histogram.low, histogram.high

    def best(pairs: list[tuple[int, int]]) -> tuple[int, int]:
        # `pairs` lists the widest candidate first, so ties keep the wider range.
        divergences = [clipping_divergence(counts, start, stop, levels) for start, stop in pairs]
        return pairs[int(np.argmin(divergences))]

    def positions(lowest: int, highest: int) -> list[int]:
        if lowest > highest:
            return []
        spaced = np.linspace(lowest, highest, candidates).round().astype(int)
        return [int(edge) for edge in np.unique(spaced)]

    # 1. Both bounds towards 0 together.
    fractions = np.linspace(1.0, levels / size, candidates)
    together = []
    for fraction in fractions:
        start = zero_edge - round(fraction * zero_edge)
        stop = zero_edge + round(fraction * (size - zero_edge))
        if stop - start >= levels and (start, stop) not in together:
            together.append((start, stop))
    start, stop = best(together) if together else (0, size)
    # 2. Each bound alone.
    highs = positions(max(zero_edge, start + levels), size)[::-1]
    if highs:
        start, stop = best([(start, high) for high in highs])
    lows = positions(0, min(zero_edge, stop - levels))
    if lows:
        start, stop = best([(low, stop) for low in lows])
    return _clamp_to_observed(histogram, _edge_value(padded, start), _edge_value(padded, stop))


MSE_CANDIDATES = 512
"""How many positions of each bound `mse_range` tries (all pairs are evaluated)."""


def mse_range(
    histogram: Histogram,
    levels: int = QUANTIZATION_LEVELS,
    candidates: int = MSE_CANDIDATES,
) -> tuple[float, float]:
    """The range [a, b] (a <= 0 <= b) minimising the expected squared quantization
    error of the histogram's values.

    With step s = (b - a) / (levels - 1), a value inside the range is off by the
    rounding error, s^2 / 12 on average (values exactly 0 are exact: the zero point
    represents them); a value outside is clipped to the bound and off by its distance
    to it (the bin's centre stands for its values). Every pair of bounds from up to
    `candidates` bin edges on each side of 0 is evaluated; ties keep the wider range.
    """
    if histogram.empty:
        return 0.0, 0.0
    padded = histogram.covering_zero()
    counts = padded.counts.astype(np.float64)
    size = counts.size
    zero_edge = -padded.first
    edges = padded.edges()
    centres = (edges[:-1] + edges[1:]) / 2

    def prefix(values: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0], np.cumsum(values)])

    count_below = prefix(counts)  # count_below[e]: values in bins before edge e
    first_moment = prefix(counts * centres)
    second_moment = prefix(counts * centres**2)
    total, total_first, total_second = count_below[-1], first_moment[-1], second_moment[-1]

    low_edges = np.unique(np.linspace(0, zero_edge, candidates).round().astype(int))
    high_edges = np.unique(np.linspace(zero_edge, size, candidates).round().astype(int))[::-1]
    low_values, high_values = edges[low_edges], edges[high_edges]
    # sum over clipped bins of (bound - centre)^2, expanded into moments.
    clipped_low = (
        low_values**2 * count_below[low_edges]
        - 2 * low_values * first_moment[low_edges]
        + second_moment[low_edges]
    )
    above = total - count_below[high_edges]
    clipped_high = (
        high_values**2 * above
        - 2 * high_values * (total_first - first_moment[high_edges])
        + (total_second - second_moment[high_edges])
    )
    inside = count_below[high_edges][None, :] - count_below[low_edges][:, None]
    inside_rounded = np.maximum(inside - padded.zeros, 0.0)
    step = (high_values[None, :] - low_values[:, None]) / (levels - 1)
    error = (
        np.maximum(clipped_low, 0.0)[:, None]
        + np.maximum(clipped_high, 0.0)[None, :]
        + inside_rounded * step**2 / 12
    )
    error = np.where(high_edges[None, :] > low_edges[:, None], error, np.inf)
    best_low, best_high = np.unravel_index(int(np.argmin(error)), error.shape)
    return _clamp_to_observed(histogram, float(low_values[best_low]), float(high_values[best_high]))


# --------------------------------------------------------------------------------------
# Observers


class Observer:
    """Watches one tensor over the calibration samples; gives its calibrated range."""

    name: ClassVar[str]
    """The observer's name on the command line and in the statistics file."""

    def __init__(self) -> None:
        self.low = math.inf
        self.high = -math.inf
        self.samples = 0

    def observe(self, values: np.ndarray) -> None:
        """Take one sample's value of the tensor."""
        flat = np.asarray(values).reshape(-1)
        if flat.size == 0:
            return
        low, high = float(flat.min()), float(flat.max())
        if not (math.isfinite(low) and math.isfinite(high)):
            flat = flat[np.isfinite(flat)]
            if flat.size == 0:
                return
            low, high = float(flat.min()), float(flat.max())
        self.low, self.high = min(self.low, low), max(self.high, high)
        self.samples += 1
        self._observe(flat, low, high)

    def _observe(self, flat: np.ndarray, low: float, high: float) -> None:
        """What a subclass keeps of a sample: `flat` holds its finite values, whose
        extremes are `low` and `high`."""

    @property
    def seen(self) -> bool:
        """True once a sample with a finite value was observed."""
        return self.low <= self.high

    def calibrated_range(self) -> tuple[float, float]:
        """The range the tensor's quantized type should cover ((0, 0) if nothing seen)."""
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        """What the statistics file keeps beyond the range and extremes."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what `state` returned (after `low`, `high`, `samples` are set)."""


class MinMaxObserver(Observer):
    """The smallest and largest value over all samples."""

    name = "minmax"

    def calibrated_range(self) -> tuple[float, float]:
        return (self.low, self.high) if self.seen else (0.0, 0.0)


class MovingAverageObserver(Observer):
    """Each sample's extremes, averaged with momentum (see the module docstring)."""

    name = "moving-average"

    def __init__(self, momentum: float = DEFAULT_MOMENTUM) -> None:
        super().__init__()
        self.momentum = momentum
        self.average_low = 0.0
        self.average_high = 0.0

    def _observe(self, flat: np.ndarray, low: float, high: float) -> None:
        if self.samples == 1:
            self.average_low, self.average_high = low, high
            return
        keep = self.momentum
        self.average_low = keep * self.average_low + (1 - keep) * low
        self.average_high = keep * self.average_high + (1 - keep) * high

    def calibrated_range(self) -> tuple[float, float]:
        return (self.average_low, self.average_high) if self.seen else (0.0, 0.0)

    def state(self) -> dict[str, Any]:
        return {"average": [self.average_low, self.average_high]}

    def load_state(self, state: dict[str, Any]) -> None:
        self.average_low, self.average_high = (float(v) for v in state["average"])


class HistogramObserver(Observer):
    """Base of the observers that choose the range from a histogram of all values."""

    def __init__(self, bins: int = DEFAULT_BINS) -> None:
        super().__init__()
        self.histogram = Histogram(bins)

    def _observe(self, flat: np.ndarray, low: float, high: float) -> None:
        self.histogram.add_finite(flat, low, high)

    def state(self) -> dict[str, Any]:
        return {"histogram": self.histogram.to_json()}

    def load_state(self, state: dict[str, Any]) -> None:
        self.histogram = Histogram.from_json(
            state["histogram"], self.low, self.high, self.histogram.max_bins
        )


class PercentileObserver(HistogramObserver):
    """Two-sided percentiles of all values (`percentile_range`)."""

    name = "percentile"

    def __init__(self, percentile: float = DEFAULT_PERCENTILE, bins: int = DEFAULT_BINS) -> None:
        super().__init__(bins)
        self.percentile = percentile

    def calibrated_range(self) -> tuple[float, float]:
        if not self.seen:
            return 0.0, 0.0
        return percentile_range(self.histogram, self.percentile)


class EntropyObserver(HistogramObserver):
    """The range of least KL divergence (`entropy_range`)."""

    name = "entropy"

    def calibrated_range(self) -> tuple[float, float]:
        return entropy_range(self.histogram) if self.seen else (0.0, 0.0)


class MseObserver(HistogramObserver):
    """The range of least expected quantization error (`mse_range`)."""

    name = "mse"

    def calibrated_range(self) -> tuple[float, float]:
        return mse_range(self.histogram) if self.seen else (0.0, 0.0)


OBSERVERS: dict[str, type[Observer]] = {
    observer.name: observer
    for observer in (
        MinMaxObserver,
        MovingAverageObserver,
        PercentileObserver,
        EntropyObserver,
        MseObserver,
    )
}
"""Every observer by name."""


@dataclass(frozen=True)
class ObserverConfig:
    """An observer's name and settings: what `calibrate` creates one observer per
    tensor from, and what the statistics file records.

    Only the settings the observer uses are recorded (`settings()`): `momentum` for
    `moving-average`, `percentile` and `bins` for `percentile`, `bins` for `entropy`
    and `mse`.
    """

    name: str = "minmax"
    percentile: float = DEFAULT_PERCENTILE
    momentum: float = DEFAULT_MOMENTUM
    bins: int = DEFAULT_BINS

    def check(self) -> str | None:
        """What is wrong with the configuration, or None."""
        if self.name not in OBSERVERS:
            return f"unknown observer '{self.name}'; the observers are {', '.join(OBSERVERS)}"
        if not 50.0 < self.percentile <= 100.0:
            return f"the percentile must be in (50, 100], got {self.percentile}"
        if not 0.0 <= self.momentum < 1.0:
            return f"the momentum must be in [0, 1), got {self.momentum}"
        if self.bins < 2 * QUANTIZATION_LEVELS:
            return f"a histogram needs at least {2 * QUANTIZATION_LEVELS} bins, got {self.bins}"
        return None

    def settings(self) -> dict[str, Any]:
        """The settings this observer uses, by name."""
        if self.name == MovingAverageObserver.name:
            return {"momentum": self.momentum}
        if self.name == PercentileObserver.name:
            return {"percentile": self.percentile, "bins": self.bins}
        if issubclass(OBSERVERS[self.name], HistogramObserver):
            return {"bins": self.bins}
        return {}

    def create(self) -> Observer:
        """A new observer with these settings."""
        problem = self.check()
        if problem is not None:
            raise ValueError(problem)
        return OBSERVERS[self.name](**self.settings())

    @property
    def keeps_histogram(self) -> bool:
        """True for the observers that keep a histogram of all values."""
        return issubclass(OBSERVERS[self.name], HistogramObserver)
