"""Rate, errors and duration of calls (gRPC methods, HTTP routes) at the cost of a few list and
dict updates per call. prometheus_client's Counter and Histogram take a lock and walk their
buckets on every call; these series are bumped only from the event loop's thread, so plain
ints suffice, and the Prometheus families are built when /metrics is scraped (from copies,
so a scrape in the exporter's thread never sees a bucket ahead of its count)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


class Series:
    """One label set: a count per outcome code, and the duration histogram."""

    __slots__ = ("_bounds", "buckets", "codes", "labels", "sum")

    def __init__(self, labels: tuple[str, ...], bounds: tuple[float, ...]) -> None:
        self.labels = labels
        self._bounds = bounds
        self.buckets = [0] * (len(bounds) + 1)  # the last one: above every bound
        self.sum = 0.0
        self.codes: dict[str, int] = {}

    def observe(self, seconds: float, code: str) -> None:
        self.buckets[bisect_left(self._bounds, seconds)] += 1
        self.sum += seconds
        codes = self.codes
        codes[code] = codes.get(code, 0) + 1

    def count(self, code: str) -> None:
        """An outcome without a duration (a call refused before it started)."""
        self.codes[code] = self.codes.get(code, 0) + 1


class Family(Collector):
    """`<counter>_total{labels, code}` and `<histogram>_bucket/_sum/_count{labels}`."""

    def __init__(
        self,
        counter: tuple[str, str],
        histogram: tuple[str, str],
        labels: Sequence[str],
        code_label: str,
        bounds: Sequence[float],
    ) -> None:
        self._counter = counter
        self._histogram = histogram
        self._labels = list(labels)
        self._code_label = code_label
        self._bounds = tuple(bounds)
        self._series: dict[tuple[str, ...], Series] = {}

    def series(self, *labels: str) -> Series:
        found = self._series.get(labels)
        if found is None:
            found = self._series[labels] = Series(labels, self._bounds)
        return found

    def collect(self) -> Iterator[Metric]:
        counter = CounterMetricFamily(*self._counter, labels=[*self._labels, self._code_label])
        histogram = HistogramMetricFamily(*self._histogram, labels=self._labels)
        for s in list(self._series.values()):
            for code, n in list(s.codes.items()):
                counter.add_metric([*s.labels, code], n)
            counts = list(s.buckets)
            if not any(counts):
                continue
            cumulative, buckets = 0, []
            for bound, n in zip((*map(str, self._bounds), "+Inf"), counts, strict=True):
                cumulative += n
                buckets.append((bound, float(cumulative)))
            histogram.add_metric(list(s.labels), buckets, s.sum)
        yield counter
        yield histogram
