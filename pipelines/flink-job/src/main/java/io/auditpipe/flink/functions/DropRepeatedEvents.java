package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.IngestedEvent;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.time.Duration;

/**
 * Keyed by event id: passes the first copy of each event on to the one-minute stats and drops
 * the copies that collectors and brokers re-send (a collector restart re-reads lines since its
 * last saved position; a broker failover can make an idempotent producer re-send a batch). The
 * events collection absorbs such copies by {@code _id}; the counts need this operator to do the
 * same, so that they count each event id once.
 *
 * <p>An id is remembered until the watermark passes the end of its minute plus the stats'
 * allowed lateness, an event-time timer then clears it: from that point the window no longer
 * accepts the event anyway, so a copy arriving later could not be counted twice. (It is reported
 * by the window as too late for the stats, like any other event that late.) State therefore holds
 * the ids of the minutes still open, about (1 minute + allowed lateness) x event rate.
 */
public class DropRepeatedEvents extends KeyedProcessFunction<String, IngestedEvent, IngestedEvent> {
    private static final long serialVersionUID = 1L;

    private final long windowMillis;
    private final long allowedLatenessMillis;
    private transient ValueState<Long> forgetAt;
    private transient Counter repeats;

    public DropRepeatedEvents(Duration window, Duration allowedLateness) {
        this.windowMillis = window.toMillis();
        this.allowedLatenessMillis = allowedLateness.toMillis();
    }

    @Override
    public void open(OpenContext openContext) {
        forgetAt = getRuntimeContext().getState(new ValueStateDescriptor<>("forget-at", Types.LONG));
        repeats = getRuntimeContext().getMetricGroup().counter("repeatedEventsNotCounted");
    }

    @Override
    public void processElement(IngestedEvent e, Context ctx, Collector<IngestedEvent> out) throws Exception {
        if (forgetAt.value() != null) {
            repeats.inc();
            return;
        }
        long eventTime = ctx.timestamp() == null ? e.event.eventTimeMillis : ctx.timestamp();
        long windowEnd = eventTime - Math.floorMod(eventTime, windowMillis) + windowMillis;
        long at = windowEnd - 1 + allowedLatenessMillis;
        forgetAt.update(at);
        ctx.timerService().registerEventTimeTimer(at);
        out.collect(e);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<IngestedEvent> out) {
        forgetAt.clear();
    }
}
