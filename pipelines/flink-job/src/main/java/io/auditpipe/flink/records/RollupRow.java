package io.auditpipe.flink.records;

import java.io.Serializable;
import java.time.Duration;

/**
 * The count of one UTC day for one {@link RollupKey}: always the full count so far, so that writing
 * it again (early firings, late events, replays) replaces the stored value, as the one-minute stats
 * do.
 */
public class RollupRow implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The rollups' window: a UTC day (tumbling windows start at the epoch, a UTC midnight). */
    public static final Duration WINDOW = Duration.ofDays(1);

    public RollupKey key;
    public long dayStartMillis;
    public long count;

    /**
     * The import run whose events this counts (their chain), null for the live job's: its own
     * document, so a minute or day both hold keeps both counts (a query sums a key's documents).
     */
    public String chain;

    public RollupRow() {}

    public RollupRow(RollupKey key, long dayStartMillis, long count) {
        this.key = key;
        this.dayStartMillis = dayStartMillis;
        this.count = count;
    }

    /**
     * Deterministic document id: the day's start (epoch ms) plus the key ({@link
     * RollupKey#idText}).
     */
    public String id() {
        return dayStartMillis + "|" + key.idText() + (chain == null ? "" : "|" + chain);
    }

    @Override
    public String toString() {
        return "RollupRow{" + id() + " = " + count + "}";
    }
}
