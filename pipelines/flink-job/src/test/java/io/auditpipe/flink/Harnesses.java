package io.auditpipe.flink;

import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;

/** What the operators' harness tests share. */
public final class Harnesses {
    private Harnesses() {}

    /** {@code h} opened: its operator's state and timers set up, ready for input. */
    public static <H extends AbstractStreamOperatorTestHarness<?>> H opened(H h) throws Exception {
        h.open();
        return h;
    }
}
