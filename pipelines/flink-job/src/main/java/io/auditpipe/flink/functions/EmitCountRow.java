package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import java.io.Serializable;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Attaches the key and the window's start to the count: the one-minute stats' rows ({@link #stats})
 * and the day rollups' ({@link #rollups}) are made alike.
 */
public class EmitCountRow<K, R> extends ProcessWindowFunction<Long, R, K, TimeWindow> {
    private static final long serialVersionUID = 1L;

    /** A row of a key's count in the window that starts at {@code start}. */
    public interface RowOf<K, R> extends Serializable {
        R row(K key, long start, long count, String chain);
    }

    /** The import run whose events are counted (the row's chain), null in the live job. */
    private final String chain;

    private final RowOf<K, R> rowOf;

    EmitCountRow(String chain, RowOf<K, R> rowOf) {
        this.chain = chain;
        this.rowOf = rowOf;
    }

    /**
     * The minutes' stats rows (an anonymous subclass: its types are what Flink reads its output's
     * type from).
     */
    public static EmitCountRow<StatsKey, StatsRow> stats(String chain) {
        return new EmitCountRow<StatsKey, StatsRow>(chain, StatsRow::new) {};
    }

    /** The days' rollup rows. */
    public static EmitCountRow<RollupKey, RollupRow> rollups(String chain) {
        return new EmitCountRow<RollupKey, RollupRow>(chain, RollupRow::new) {};
    }

    @Override
    public void process(K key, Context ctx, Iterable<Long> counts, Collector<R> out) {
        for (Long count : counts)
            out.collect(rowOf.row(key, ctx.window().getStart(), count, chain));
    }
}
