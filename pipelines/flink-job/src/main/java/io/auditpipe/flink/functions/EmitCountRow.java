package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Attaches the key and the window's start to the count: the one-minute stats' rows ({@link
 * OfStats}) and the day rollups' ({@link OfRollups}) are made alike.
 */
public abstract class EmitCountRow<K, R> extends ProcessWindowFunction<Long, R, K, TimeWindow> {
    private static final long serialVersionUID = 1L;

    /** The import run whose events are counted (the row's chain), null in the live job. */
    private final String chain;

    EmitCountRow(String chain) {
        this.chain = chain;
    }

    /** The row of {@code key}'s count in the window that starts at {@code start}. */
    abstract R row(K key, long start, long count, String chain);

    @Override
    public void process(K key, Context ctx, Iterable<Long> counts, Collector<R> out) {
        for (Long count : counts) out.collect(row(key, ctx.window().getStart(), count, chain));
    }

    /** A minute's stats row. */
    public static final class OfStats extends EmitCountRow<StatsKey, StatsRow> {
        private static final long serialVersionUID = 1L;

        public OfStats(String chain) {
            super(chain);
        }

        @Override
        StatsRow row(StatsKey key, long start, long count, String chain) {
            StatsRow row = new StatsRow(key, start, count);
            row.chain = chain;
            return row;
        }
    }

    /** A day's rollup row. */
    public static final class OfRollups extends EmitCountRow<RollupKey, RollupRow> {
        private static final long serialVersionUID = 1L;

        public OfRollups(String chain) {
            super(chain);
        }

        @Override
        RollupRow row(RollupKey key, long start, long count, String chain) {
            RollupRow row = new RollupRow(key, start, count);
            row.chain = chain;
            return row;
        }
    }
}
