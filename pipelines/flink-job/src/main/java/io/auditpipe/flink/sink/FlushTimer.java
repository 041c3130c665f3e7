package io.auditpipe.flink.sink;

import org.apache.flink.api.common.operators.ProcessingTimeService;

/**
 * A writer's flush timer, set only while it has something to watch: a document waiting in a partly
 * filled batch, or a batch in flight whose failure should fail the task at once rather than at the
 * next record. An idle writer sets no timer, so an idle job's sinks wake no thread: a dozen sinks
 * at parallelism 2, each woken twice a second for nothing, would be a visible part of an idle
 * stack's CPU.
 *
 * <p>Touched by the task's thread only (writes and timers both run in its mailbox).
 */
final class FlushTimer {
    /** What the timer does when it fires; answers whether there is still something to watch. */
    @FunctionalInterface
    interface Flush {
        boolean flush() throws Exception;
    }

    private final ProcessingTimeService time;
    private final long intervalMillis;
    private final Flush flush;
    private boolean set;

    FlushTimer(ProcessingTimeService time, long intervalMillis, Flush flush) {
        this.time = time;
        this.intervalMillis = intervalMillis;
        this.flush = flush;
    }

    /** Sets the timer unless it is set: the longest a document waits is the interval. */
    void watch() {
        if (set) {
            return;
        }
        set = true;
        time.registerTimer(
                time.getCurrentProcessingTime() + intervalMillis,
                t -> {
                    set = false;
                    if (flush.flush()) {
                        watch();
                    }
                });
    }

    boolean isSet() {
        return set;
    }
}
