package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Attaches the key and the day to the count. */
public class EmitRollupRow extends ProcessWindowFunction<Long, RollupRow, RollupKey, TimeWindow> {
    private static final long serialVersionUID = 1L;

    /** The import run whose events are counted (RollupRow#chain), null in the live job. */
    private final String chain;

    public EmitRollupRow() {
        this(null);
    }

    public EmitRollupRow(String chain) {
        this.chain = chain;
    }

    @Override
    public void process(
            RollupKey key, Context ctx, Iterable<Long> counts, Collector<RollupRow> out) {
        for (Long count : counts) {
            RollupRow row = new RollupRow(key, ctx.window().getStart(), count);
            row.chain = chain;
            out.collect(row);
        }
    }
}
