package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@link NumberedRuns}: runs that merge as numbers come in any order, copies told from collisions,
 * a bound, forgetting.
 */
class NumberedRunsTest {
    private static final String START = "2026-11-27T08:00:00";

    @Test
    void numbersInOrderAreOneRunWhateverTheirCount() {
        NumberedRuns runs = new NumberedRuns();
        for (long n = 1; n <= 100_000; n++) {
            assertEquals(NumberedRuns.NOT_SEEN, runs.seen(START, n, n));
            assertTrue(runs.add(START, n, n, 1_000 + n / 1_000));
        }
        assertEquals(1, runs.runs());
        assertEquals(NumberedRuns.COPY, runs.seen(START, 50_000, 50_000));
        assertEquals(NumberedRuns.NOT_SEEN, runs.seen(START, 100_001, 100_001));
        assertEquals(
                NumberedRuns.NOT_SEEN, runs.seen("2026-11-27T09:00:00", 5, 5), "another sequence");
    }

    @Test
    void inAnyOrderEveryNumberIsSeenExactlyFromItsFirstArrivalAndTheRunsMerge() {
        for (int seed = 0; seed < 20; seed++) {
            Random random = new Random(seed);
            List<Long> numbers = new ArrayList<>();
            for (long n = 1; n <= 2_000; n++) {
                numbers.add(n);
                if (random.nextInt(10) == 0) numbers.add(n); // a copy
            }
            Collections.shuffle(numbers, random);
            NumberedRuns runs = new NumberedRuns();
            Map<Long, Boolean> passed = new HashMap<>();
            for (long n : numbers) {
                int seen = runs.seen(START, n, 10 * n); // a record's time: its copy's too
                assertEquals(
                        passed.containsKey(n) ? NumberedRuns.COPY : NumberedRuns.NOT_SEEN,
                        seen,
                        "seed " + seed + ", number " + n);
                if (seen == NumberedRuns.NOT_SEEN) {
                    assertTrue(runs.add(START, n, 10 * n, 0));
                    passed.put(n, true);
                }
            }
            assertEquals(1, runs.runs(), "every number from 1 to 2,000 came: one run");
        }
    }

    @Test
    void aNumberInARunWithATimeOutsideItsRecordsIsACollision() {
        NumberedRuns runs = new NumberedRuns();
        for (long n = 1; n <= 10; n++) runs.add(START, n, 1_000 + n, 0);
        assertEquals(NumberedRuns.COPY, runs.seen(START, 3, 1_003));
        assertEquals(
                NumberedRuns.COPY,
                runs.seen(START, 3, 1_005),
                "within the run's times: taken for a copy");
        assertEquals(
                NumberedRuns.COLLISION,
                runs.seen(START, 1, 5_000),
                "the numbering started again under the same startup time");
        assertEquals(NumberedRuns.COLLISION, runs.seen(START, 10, 500));
    }

    @Test
    void runsPastTheBoundAreNotTakenAndTheRestStillAre() {
        NumberedRuns runs = new NumberedRuns();
        for (int i = 0; i < NumberedRuns.MAX_RUNS; i++)
            assertTrue(runs.add(START, 2L * i, i, 0), "every other number: a run each");
        assertEquals(NumberedRuns.MAX_RUNS, runs.runs());
        assertFalse(runs.add(START, 1_000_000, 1, 0), "one more run");
        assertFalse(runs.add("2026-11-27T09:00:00", 1, 1, 0), "nor a run of another sequence");
        assertEquals(1, runs.sequences());
        assertTrue(runs.add(START, 1, 1, 0), "a number that joins two runs");
        assertTrue(
                runs.add(START, 2L * NumberedRuns.MAX_RUNS - 1, 1, 0), "a number that extends one");
        assertEquals(NumberedRuns.MAX_RUNS - 1, runs.runs());
        assertTrue(runs.add(START, 1_000_000, 1, 0), "room again");
    }

    @Test
    void aRunIsForgottenAtTheLatestTimeToForgetOfItsNumbers() {
        NumberedRuns runs = new NumberedRuns();
        runs.add(START, 1, 1, 100);
        runs.add(START, 2, 2, 200);
        runs.add(START, 10, 10, 150);
        runs.add("2026-11-27T09:00:00", 1, 1, 120);
        runs.forgetUpTo(149);
        assertEquals(2, runs.runs());
        assertEquals(
                NumberedRuns.COPY,
                runs.seen(START, 1, 1),
                "kept while its last number is remembered");
        assertEquals(NumberedRuns.COPY, runs.seen(START, 10, 10));
        assertEquals(
                1, runs.sequences(), "the sequence whose runs are all forgotten goes with them");
        runs.forgetUpTo(200);
        assertEquals(0, runs.runs());
        assertEquals(0, runs.sequences());
    }

    @Test
    void theSerializerWritesEveryRunAndACopyIsIndependent() throws Exception {
        NumberedRuns runs = new NumberedRuns();
        for (long n = 1; n <= 5; n++) runs.add(START, 3 * n, n, 100 + n);
        runs.add("2026-11-27T09:00:00", 7, 7, 300);
        runs.mapUntil = 12_345;
        DataOutputSerializer out = new DataOutputSerializer(256);
        NumberedRuns.Serializer.INSTANCE.serialize(runs, out);
        NumberedRuns back =
                NumberedRuns.Serializer.INSTANCE.deserialize(
                        new DataInputDeserializer(out.getCopyOfBuffer()));
        assertEquals(6, back.runs());
        assertEquals(12_345, back.mapUntil);
        for (long n = 1; n <= 5; n++) assertEquals(NumberedRuns.COPY, back.seen(START, 3 * n, n));
        assertEquals(NumberedRuns.COPY, back.seen("2026-11-27T09:00:00", 7, 7));

        NumberedRuns copy = NumberedRuns.Serializer.INSTANCE.copy(runs);
        copy.add(START, 4, 1, 0);
        copy.forgetUpTo(102);
        assertEquals(
                NumberedRuns.NOT_SEEN,
                runs.seen(START, 4, 1),
                "the original does not change with its copy");
        assertEquals(6, runs.runs());
    }
}
