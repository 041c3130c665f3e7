package io.auditpipe.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.runtime.tasks.TestProcessingTimeService;
import org.junit.jupiter.api.Test;

/** The sinks' flush timer: set by a write, kept while something is in flight, none while idle. */
class FlushTimerTest {
    @Test
    void anIdleWriterSetsNoTimerAndAWriteSetsOne() throws Exception {
        TestProcessingTimeService time = new TestProcessingTimeService();
        time.setCurrentTime(1_000);
        List<Long> fired = new ArrayList<>();
        FlushTimer timer =
                new FlushTimer(
                        time,
                        500,
                        () -> {
                            fired.add(time.getCurrentProcessingTime());
                            return false;
                        });
        time.advance(10_000);
        assertEquals(0, time.getNumActiveTimers(), "nothing written: no timer");

        timer.watch();
        timer.watch(); // a second write before the timer fires sets no second timer
        assertEquals(1, time.getNumActiveTimers());
        time.advance(499);
        assertEquals(List.of(), fired, "fires after the interval, not before");
        time.advance(1);
        assertEquals(List.of(11_500L), fired);
        assertFalse(timer.isSet());
        time.advance(10_000);
        assertEquals(1, fired.size(), "nothing left to watch: the timer is not set again");
        assertEquals(0, time.getNumActiveTimers());
    }

    @Test
    void keepsWatchingWhileABatchIsInFlight() throws Exception {
        TestProcessingTimeService time = new TestProcessingTimeService();
        int[] inFlightFor = {3};
        int[] fired = {0};
        FlushTimer timer =
                new FlushTimer(
                        time,
                        500,
                        () -> {
                            fired[0]++;
                            return --inFlightFor[0] > 0;
                        });
        timer.watch();
        for (int i = 0; i < 10; i++) {
            time.advance(500);
        }
        assertEquals(3, fired[0], "set again while the batch was in flight, then not");
        assertFalse(timer.isSet());
        timer.watch();
        assertTrue(timer.isSet());
    }
}
