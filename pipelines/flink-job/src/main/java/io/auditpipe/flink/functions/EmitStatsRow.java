package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Attaches the key and the minute to the count. */
public class EmitStatsRow extends ProcessWindowFunction<Long, StatsRow, StatsKey, TimeWindow> {
    private static final long serialVersionUID = 1L;

    /** The import run whose events are counted (StatsRow#chain), null in the live job. */
    private final String chain;

    public EmitStatsRow() {
        this(null);
    }

    public EmitStatsRow(String chain) {
        this.chain = chain;
    }

    @Override
    public void process(StatsKey key, Context ctx, Iterable<Long> counts, Collector<StatsRow> out) {
        for (Long count : counts) {
            StatsRow row = new StatsRow(key, ctx.window().getStart(), count);
            row.chain = chain;
            out.collect(row);
        }
    }
}
