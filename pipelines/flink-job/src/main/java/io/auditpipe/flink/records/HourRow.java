package io.auditpipe.flink.records;

import java.io.Serializable;

/**
 * A server's events in one hour of event time: the sum of its one-minute counts of that hour
 * ({@link StatsRow}), so the two never disagree. Always the full count so far, never a delta, like
 * the minute's: writing it again replaces the stored value.
 *
 * @param chain the import run whose events this counts (StatsRow#chain), null for the live job's
 */
public record HourRow(String server, long hourStartMillis, long count, String chain)
        implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final long HOUR_MILLIS = 3_600_000L;

    /**
     * Deterministic document id: hour start (epoch ms) and server, then the chain of an import's
     * count.
     */
    public String id() {
        return hourStartMillis + "|" + server + (chain == null ? "" : "|" + chain);
    }

    /** The start of the hour a time is in. */
    public static long hourOf(long millis) {
        return Math.floorDiv(millis, HOUR_MILLIS) * HOUR_MILLIS;
    }

    @Override
    public String toString() {
        return "HourRow{" + id() + " = " + count + "}";
    }
}
