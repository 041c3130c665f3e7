"""Waiting on the store's cheap count (components/store.wait_for_documents).

FerretDB's $collStats count was seen stuck at 198,309 while a find returned all 200,000; a wait
that trusted it hung until its timeout. The cheap count is the collection's own answer, so a stand-in
that reports what FerretDB reported is the only way to replay that moment deterministically."""

from auditpipe.store.client import wait_for_documents


class LaggingCount:
    """$collStats answers ``stuck_at`` forever; an exact count knows the truth."""

    def __init__(self, stuck_at: int, truth: int):
        self.stuck_at, self.truth, self.exact_counts = stuck_at, truth, 0

    def aggregate(self, pipeline):
        assert pipeline == [{"$collStats": {"count": {}}}]
        return [{"count": self.stuck_at}]

    def count_documents(self, flt):
        self.exact_counts += 1
        return self.truth


def test_a_stuck_cheap_count_is_checked_with_an_exact_one_and_the_wait_ends():
    coll = LaggingCount(198_309, 200_000)
    count, _ = wait_for_documents(coll, 200_000, timeout=10, every=0.01, stale_after=0.2)
    assert count == 200_000 and coll.exact_counts >= 1


def test_a_count_that_never_gets_there_ends_at_the_timeout_with_what_there_is():
    coll = LaggingCount(10, 10)
    count, _ = wait_for_documents(coll, 20, timeout=0.5, every=0.01, stale_after=0.1)
    assert count == 10


def test_a_moving_count_needs_no_exact_count():
    class Growing(LaggingCount):
        def aggregate(self, pipeline):
            self.stuck_at += 1
            return [{"count": self.stuck_at}]

    coll = Growing(0, 0)
    count, _ = wait_for_documents(coll, 50, timeout=10, every=0.001, stale_after=5)
    assert count == 50 and coll.exact_counts == 0
