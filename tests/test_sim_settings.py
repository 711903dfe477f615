"""The protocol-neutral simulator (ref_impl/sim): one settings parser and one step loop for Kafka, YDB and C*One."""

from __future__ import annotations

import random

import pytest

from ref_impl.cone.sim import Faults as ConeFaults
from ref_impl.kafka.sim.faults import Faults as KafkaFaults
from ref_impl.kafka.sim.workloads import Workload as KafkaWorkload
from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError
from ref_impl.sim.stepper import Step, Stepper, pick
from ref_impl.ydb.sim import Faults as YdbFaults
from ref_impl.ydb.sim import Workload as YdbWorkload
from trace_check.traces.protocol import ProtocolInputError


def test_pairs_keep_the_order_written_and_give_bare_keys_their_value() -> None:
    assert settings.pairs(" b=2, a ,, c=x ") == {"b": "2", "a": "", "c": "x"}
    assert settings.pairs("hangs,loss=2", bare="1") == {"hangs": "1", "loss": "2"}


@pytest.mark.parametrize(("call", "message"), [
    (lambda: settings.whole("txns", "x"), "txns=x: txns needs a whole number"),
    (lambda: settings.whole("txns", "0", 1), "txns=0: txns must be at least 1"),
    (lambda: settings.whole("adders", "12", 0, 9), "adders=12: adders must be between 0 and 9"),
    (lambda: settings.whole("in_flight", "6", 1, 5, "the client's limit"), "in_flight=6: in_flight is at most 5 (the client's limit)"),
    (lambda: settings.flag("table", "maybe"), "table=maybe: use table=true or table=false"),
    (lambda: settings.choice("version", "v9", ("v25", "v26")), "version=v9: use v25 or v26"),
    (lambda: settings.bugs("a+zz", ("a", "b")), "unknown bug 'zz'; the spec's Bugs are a, b"),
])
def test_each_mistake_is_one_line_naming_the_setting(call: object, message: str) -> None:
    with pytest.raises(SettingsError) as e:
        call()  # type: ignore[operator]
    assert str(e.value) == message


def test_the_same_setting_means_the_same_in_every_protocol() -> None:
    """A flag is written the same way in Kafka's and YDB's workloads, a bare fault means one in YDB's and C*One's."""
    for text in ("aborts", "aborts=1", "aborts=true", "aborts=yes"):
        assert KafkaWorkload.parse("transfer:" + text).aborts
    assert not KafkaWorkload.parse("transfer:aborts=false").aborts
    with pytest.raises(SettingsError, match="use aborts=true or aborts=false"):
        KafkaWorkload.parse("transfer:aborts=banana")  # read as false before the settings were shared
    assert YdbWorkload.parse("copy:table").table and YdbWorkload.parse("copy:table=yes").table
    assert YdbFaults.parse("hangs,loss=2") == YdbFaults(hangs=1, loss=2)
    assert ConeFaults.parse("crash,drop=2") == ConeFaults(crash=1, drop=2)
    assert KafkaFaults.parse("timeouts,loss=1") == KafkaFaults(loss=1, timeouts=True)


def test_an_option_s_error_names_the_option() -> None:
    with pytest.raises(ProtocolInputError, match=r"^--faults: loss=x: loss needs a whole number$"):
        settings.option("--faults", KafkaFaults.parse, "loss=x")


def test_pick_gives_each_step_its_share_with_one_draw() -> None:
    weights = [10, 1, 10]
    rng, twin = random.Random(5), random.Random(5)
    counts = [0, 0, 0]
    for _ in range(2100):
        i = pick(rng, weights)
        x = twin.randrange(21)  # the same single draw, read off the cumulative weights by hand
        assert i == (0 if x < 10 else 1 if x < 11 else 2)
        counts[i] += 1
    assert counts[1] < counts[0] / 4 and counts[1] < counts[2] / 4


class Countdown(Stepper):
    """A toy: ``n`` steps, each a tick; a stuck round once releases a last step."""

    def __init__(self, n: int, max_events: int) -> None:
        self.rng, self.max_events, self.n, self.ticks, self.released = random.Random(1), max_events, n, 0, False

    def events(self) -> int:
        return self.ticks

    def _tick(self) -> bool:
        self.ticks += 1
        return True

    def steps(self) -> list[Step]:
        return [Step("Tick", 10, self._tick)] if self.ticks < self.n else []

    def when_stuck(self) -> list[Step]:
        if self.released:
            return []
        self.released = True
        return [Step("Late", 1, self._tick)]


def test_the_loop_ends_when_nothing_is_enabled_or_at_the_event_bound() -> None:
    assert Countdown(3, 100).run() == 4  # three ticks, then the released late step
    seen: list[int] = []
    assert Countdown(50, 7).run(seen.append) == 7
    assert seen == list(range(1, 8))


def test_a_step_listed_as_enabled_that_does_not_run_is_an_error() -> None:
    class Liar(Countdown):
        def steps(self) -> list[Step]:
            return [Step("Nothing", 1, lambda: False)]

    with pytest.raises(AssertionError, match="step Nothing was listed as enabled but did not run"):
        Liar(1, 10).run()
