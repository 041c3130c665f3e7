"""evidence/verify.py Pacer: a reader kept to its share of the time."""
import pytest

from auditpipe.evidence import verify


class Clock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(verify.time, "monotonic", c.monotonic)
    monkeypatch.setattr(verify.time, "sleep", c.sleep)
    return c


def test_a_third_of_the_time_reading_pauses_twice_as_long_as_it_read(clock):
    pacer = verify.Pacer(1 / 3, every=10)
    for _ in range(30):
        clock.now += 0.01  # each document takes 10 ms to read and judge
        pacer.tick()
    assert clock.slept == pytest.approx([0.2, 0.2, 0.2]), "after each 10 documents (0.1 s), 0.2 s"
    assert pacer.paused == pytest.approx(0.6)


def test_a_whole_share_never_pauses(clock):
    pacer = verify.Pacer(1.0, every=1)
    for _ in range(100):
        clock.now += 1
        pacer.tick()
    assert clock.slept == []


@pytest.mark.parametrize("share", [0, -0.5, 1.5])
def test_a_share_outside_the_time_is_refused(share):
    with pytest.raises(ValueError, match="share of the time"):
        verify.Pacer(share)
