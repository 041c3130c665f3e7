package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Attaches the key and the minute to the count. */
public class EmitStatsRow extends ProcessWindowFunction<Long, StatsRow, StatsKey, TimeWindow> {
    private static final long serialVersionUID = 1L;

    @Override
    public void process(StatsKey key, Context ctx, Iterable<Long> counts, Collector<StatsRow> out) {
        for (Long count : counts) {
            out.collect(new StatsRow(key, ctx.window().getStart(), count));
        }
    }
}
