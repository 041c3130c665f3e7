package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PassedIds}: finds an id only under its own time to forget, forgets exactly the due ones,
 * hands every entry over.
 */
class PassedIdsTest {
    private final FirstCopies.IdHasher ids = new FirstCopies.IdHasher();

    private RememberedId key(int i, long forgetAt) {
        ids.hash("db-01/" + i + "_2026-11-24T06:00:00");
        return new RememberedId(forgetAt, ids.high, ids.low);
    }

    private static long line(int i) {
        return 1_000_000L + i;
    }

    @Test
    void findsEachIdUnderItsTimeToForgetThroughGrowthAndForgetsExactlyTheDueOnes() {
        PassedIds passed = new PassedIds();
        Map<RememberedId, Long> expected = new HashMap<>();
        int n = 50_000; // many doublings of the table
        for (int i = 0; i < n; i++) {
            RememberedId k = key(i, i % 2 == 0 ? 1_000 : 2_000);
            assertEquals(FirstCopies.NOT_SEEN, passed.lineOf(k.forgetAt(), k.high(), k.low()));
            passed.add(k.forgetAt(), k.high(), k.low(), line(i));
            expected.put(k, line(i));
        }
        assertEquals(n, passed.size());
        for (Map.Entry<RememberedId, Long> e : expected.entrySet()) {
            RememberedId k = e.getKey();
            assertEquals(e.getValue(), passed.lineOf(k.forgetAt(), k.high(), k.low()));
            assertEquals(
                    FirstCopies.NOT_SEEN,
                    passed.lineOf(k.forgetAt() + 1, k.high(), k.low()),
                    "another minute's id is another key");
        }
        // the same id under another time to forget is an entry of its own, as in the map state
        RememberedId again = key(0, 3_000);
        passed.add(again.forgetAt(), again.high(), again.low(), 7L);
        assertEquals(7L, passed.lineOf(3_000, again.high(), again.low()));
        assertEquals(line(0), passed.lineOf(1_000, again.high(), again.low()));
        expected.put(again, 7L);

        assertEquals(
                expected,
                new HashMap<>(passed.asMap()),
                "every entry handed over, with its time, id and line");
        assertEquals(expected.size(), passed.asMap().size());

        passed.forgetUpTo(999); // none due
        assertEquals(n + 1, passed.size());
        passed.forgetUpTo(1_000);
        assertEquals(n / 2 + 1, passed.size());
        for (Map.Entry<RememberedId, Long> e : expected.entrySet()) {
            RememberedId k = e.getKey();
            long want = k.forgetAt() <= 1_000 ? FirstCopies.NOT_SEEN : e.getValue();
            assertEquals(want, passed.lineOf(k.forgetAt(), k.high(), k.low()));
        }
    }

    @Test
    void forgettingEverythingLeavesATableThatTakesNewIds() {
        PassedIds passed = new PassedIds();
        RememberedId a = key(1, 1_000);
        passed.add(a.forgetAt(), a.high(), a.low(), 1L);
        passed.forgetUpTo(5_000);
        assertTrue(passed.isEmpty());
        assertTrue(passed.asMap().isEmpty());
        // the shared empty table must not take entries: another buffer that forgot everything stays
        // empty
        PassedIds other = new PassedIds();
        other.add(a.forgetAt(), a.high(), a.low(), 1L);
        other.forgetUpTo(5_000);
        for (int i = 0; i < 10; i++) {
            RememberedId k = key(i, 6_000);
            passed.add(k.forgetAt(), k.high(), k.low(), line(i));
        }
        assertEquals(10, passed.size());
        assertTrue(other.isEmpty());
        assertEquals(
                FirstCopies.NOT_SEEN,
                other.lineOf(6_000, key(3, 6_000).high(), key(3, 6_000).low()));
        assertEquals(line(3), passed.lineOf(6_000, key(3, 6_000).high(), key(3, 6_000).low()));
    }
}
