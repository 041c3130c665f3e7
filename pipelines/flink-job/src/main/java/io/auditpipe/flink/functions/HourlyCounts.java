package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.StatsRow;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Each server's events per hour, summed from its one-minute counts as they are written: the minute
 * rows of a server's hour (keyed by {@link #KEY}), each minute key's latest count remembered, the
 * hour's total the sum of them. A row written again (an early firing, then a late event) replaces
 * its minute key's count, so the hour equals the sum of the minutes stored, to the event.
 *
 * <p>Live, each change writes the hour's total (an upsert), and the hour is forgotten once none of
 * its minutes can change: at its end plus the allowed lateness. Imported history's minutes are
 * written once (AuditPipeline#windowed), and its hour once too, when the watermark passes its end:
 * every minute row of the hour has come by then (the window emits a minute's row before passing on
 * the watermark that closed it).
 */
public class HourlyCounts extends KeyedProcessFunction<String, StatsRow, HourRow> {
    private static final long serialVersionUID = 1L;

    /** A server's hour: the key of the minute rows summed together. */
    public static final KeySelector<StatsRow, String> KEY =
            row -> row.key.server + "|" + HourRow.hourOf(row.windowStartMillis);

    private final long allowedLatenessMillis;
    private final boolean once;
    private final String chain;
    private transient MapState<String, Long> minutes;
    private transient ValueState<Long> total;

    /** Live: each change written, the hour kept for {@code allowedLateness} after its end. */
    public static HourlyCounts live(Duration allowedLateness) {
        return new HourlyCounts(allowedLateness.toMillis(), false, null);
    }

    /** Imported history in {@code chain}: each hour written once, at its end. */
    public static HourlyCounts once(String chain) {
        return new HourlyCounts(0, true, chain);
    }

    private HourlyCounts(long allowedLatenessMillis, boolean once, String chain) {
        this.allowedLatenessMillis = allowedLatenessMillis;
        this.once = once;
        this.chain = chain;
    }

    @Override
    public void open(OpenContext openContext) {
        minutes =
                getRuntimeContext()
                        .getMapState(
                                new MapStateDescriptor<>(
                                        "hour-minute-counts", Types.STRING, Types.LONG));
        total = getRuntimeContext().getState(new ValueStateDescriptor<>("hour-total", Types.LONG));
    }

    @Override
    public void processElement(StatsRow row, Context ctx, Collector<HourRow> out) throws Exception {
        long hour = HourRow.hourOf(row.windowStartMillis);
        Long sum = total.value();
        if (sum == null) {
            sum = 0L;
            ctx.timerService()
                    .registerEventTimeTimer(hour + HourRow.HOUR_MILLIS - 1 + allowedLatenessMillis);
        }
        String minute = row.id();
        Long before = minutes.get(minute);
        sum += row.count - (before == null ? 0 : before);
        minutes.put(minute, row.count);
        total.update(sum);
        if (!once) out.collect(new HourRow(row.key.server, hour, sum, chain));
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<HourRow> out)
            throws Exception {
        Long sum = total.value();
        if (once && sum != null) {
            String key = ctx.getCurrentKey();
            out.collect(
                    new HourRow(
                            key.substring(0, key.lastIndexOf('|')),
                            timestamp + 1 - HourRow.HOUR_MILLIS,
                            sum,
                            chain));
        }
        minutes.clear();
        total.clear();
    }
}
