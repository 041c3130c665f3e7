package io.auditpipe.flink.records;

/** The count of one minute for one {@link StatsKey}. */
public class StatsRow extends CountRow {
    private static final long serialVersionUID = 1L;

    public StatsKey key;
    public long windowStartMillis;

    public StatsRow() {}

    public StatsRow(StatsKey key, long windowStartMillis, long count, String chain) {
        super(count, chain);
        this.key = key;
        this.windowStartMillis = windowStartMillis;
    }

    /** The minute's start (epoch ms) plus the key. */
    public String id() {
        return id(windowStartMillis, String.valueOf(key));
    }

    @Override
    public String toString() {
        return "StatsRow{" + id() + " = " + count + "}";
    }
}
