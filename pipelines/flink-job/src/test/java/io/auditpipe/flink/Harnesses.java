package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

/** What the operators' harness tests share. */
public final class Harnesses {
    private Harnesses() {}

    /** {@code h} opened: its operator's state and timers set up, ready for input. */
    public static <H extends AbstractStreamOperatorTestHarness<?>> H opened(H h) throws Exception {
        h.open();
        return h;
    }

    /**
     * Snapshots {@code h} as checkpoint {@code checkpoint} (what a write-back operator holds goes
     * to its state) and asserts that it keeps no keyed state and no event-time timer.
     */
    public static void assertClearedAt(
            KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h, long checkpoint) throws Exception {
        h.snapshot(checkpoint, 0);
        assertEquals(0, h.numKeyedStateEntries(), "keyed state entries left");
        assertEquals(0, h.numEventTimeTimers(), "event-time timers left");
    }
}
