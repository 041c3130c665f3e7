package io.auditpipe.flink.records;

import java.io.Serializable;

/**
 * A window's count for one key ({@link StatsRow}: a minute, {@link RollupRow}: a UTC day): always
 * the full count so far, never a delta, so that writing it again (early firings, late events,
 * replays) replaces the stored value and the counts are idempotent.
 */
public abstract class CountRow implements Serializable {
    private static final long serialVersionUID = 1L;

    public long count;

    /**
     * The import run whose events this counts (their chain), null for the live job's: its own
     * document, so a minute or day both hold keeps both counts (a query sums a key's documents).
     */
    public String chain;

    protected CountRow() {}

    protected CountRow(long count, String chain) {
        this.count = count;
        this.chain = chain;
    }

    /**
     * The deterministic document id: the window's start (epoch ms), the key, the import run's
     * chain.
     */
    protected final String id(long start, String key) {
        return start + "|" + key + (chain == null ? "" : "|" + chain);
    }
}
