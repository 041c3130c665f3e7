package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.RollupKey;
import io.auditpipe.flink.records.RollupRow;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Attaches the key and the day to the count. */
public class EmitRollupRow extends ProcessWindowFunction<Long, RollupRow, RollupKey, TimeWindow> {
    private static final long serialVersionUID = 1L;

    @Override
    public void process(RollupKey key, Context ctx, Iterable<Long> counts, Collector<RollupRow> out) {
        for (Long count : counts) {
            out.collect(new RollupRow(key, ctx.window().getStart(), count));
        }
    }
}
