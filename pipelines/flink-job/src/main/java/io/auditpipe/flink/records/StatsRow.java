package io.auditpipe.flink.records;

import java.io.Serializable;

/**
 * The count of one minute for one {@link StatsKey}. Always the full count so far, never a delta:
 * writing it again (early firings, late events, replays) replaces the stored value, so the stats
 * are idempotent.
 */
public class StatsRow implements Serializable {
    private static final long serialVersionUID = 1L;

    public StatsKey key;
    public long windowStartMillis;
    public long count;

    /**
     * The import run whose events this counts (their chain), null for the live job's: its own
     * document, so a minute or day both hold keeps both counts (a query sums a key's documents).
     */
    public String chain;

    public StatsRow() {}

    public StatsRow(StatsKey key, long windowStartMillis, long count) {
        this.key = key;
        this.windowStartMillis = windowStartMillis;
        this.count = count;
    }

    /** Deterministic document id: minute start (epoch ms) plus the key. */
    public String id() {
        return windowStartMillis + "|" + key + (chain == null ? "" : "|" + chain);
    }

    @Override
    public String toString() {
        return "StatsRow{" + id() + " = " + count + "}";
    }
}
