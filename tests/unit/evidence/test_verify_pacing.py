"""evidence/verify.py: the Pacer that keeps a reader to its share of the time, and the holes a pass looks for again."""
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


def test_the_holes_a_pass_looks_for_again_are_the_links_missing_between_those_read():
    from auditpipe.evidence.chain import Anchor

    assert verify._holes({5, 6, 7}, None) == []
    assert verify._holes({7, 5, 9, 10, 14}, None) == [(6, 6), (8, 8), (11, 13)]
    anchor = Anchor(2, "d", "x")
    assert verify._holes({5, 6}, anchor) == [(3, 4)], "between the link verified earlier and the first one read"
    assert verify._holes({1, 2, 3, 4}, anchor) == [], "links up to the anchor are judged as inserts, not looked for"
    assert verify._holes(set(), anchor) == []
