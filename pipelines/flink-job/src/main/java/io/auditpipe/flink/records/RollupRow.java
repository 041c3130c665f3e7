package io.auditpipe.flink.records;

import java.time.Duration;

/** The count of one UTC day for one {@link RollupKey}, as the one-minute stats count a minute. */
public class RollupRow extends CountRow {
    private static final long serialVersionUID = 1L;

    /** The rollups' window: a UTC day (tumbling windows start at the epoch, a UTC midnight). */
    public static final Duration WINDOW = Duration.ofDays(1);

    public RollupKey key;
    public long dayStartMillis;

    public RollupRow() {}

    public RollupRow(RollupKey key, long dayStartMillis, long count, String chain) {
        super(count, chain);
        this.key = key;
        this.dayStartMillis = dayStartMillis;
    }

    /** The day's start (epoch ms) plus the key ({@link RollupKey#idText}). */
    public String id() {
        return id(dayStartMillis, key.idText());
    }

    @Override
    public String toString() {
        return "RollupRow{" + id() + " = " + count + "}";
    }
}
