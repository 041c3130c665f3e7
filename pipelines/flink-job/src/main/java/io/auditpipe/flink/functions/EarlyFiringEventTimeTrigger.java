package io.auditpipe.flink.functions;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.time.Duration;

/**
 * Event-time trigger that also fires early: a processing-time timer {@code interval} after the
 * first element since the last firing. Every firing emits the window's full count (FIRE, never
 * PURGE), so the store always holds the latest count and a quiet stream's last minute is
 * written without waiting for a watermark that may never come. Late elements (within allowed
 * lateness) fire at once. State is cleared with the window.
 */
public class EarlyFiringEventTimeTrigger extends Trigger<Object, TimeWindow> {
    private static final long serialVersionUID = 1L;

    private final long intervalMillis;
    private final ValueStateDescriptor<Long> pendingTimer =
            new ValueStateDescriptor<>("early-fire-timer", Types.LONG);

    public EarlyFiringEventTimeTrigger(Duration interval) {
        this.intervalMillis = interval.toMillis();
    }

    @Override
    public TriggerResult onElement(Object element, long timestamp, TimeWindow window, TriggerContext ctx)
            throws Exception {
        if (window.maxTimestamp() <= ctx.getCurrentWatermark()) {
            return TriggerResult.FIRE; // late but allowed: update the count now
        }
        ctx.registerEventTimeTimer(window.maxTimestamp());
        ValueState<Long> pending = ctx.getPartitionedState(pendingTimer);
        if (pending.value() == null) {
            long at = ctx.getCurrentProcessingTime() + intervalMillis;
            ctx.registerProcessingTimeTimer(at);
            pending.update(at);
        }
        return TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx) throws Exception {
        ctx.getPartitionedState(pendingTimer).clear();
        return TriggerResult.FIRE;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx) {
        return time == window.maxTimestamp() ? TriggerResult.FIRE : TriggerResult.CONTINUE;
    }

    @Override
    public void clear(TimeWindow window, TriggerContext ctx) throws Exception {
        ValueState<Long> pending = ctx.getPartitionedState(pendingTimer);
        Long at = pending.value();
        if (at != null) {
            ctx.deleteProcessingTimeTimer(at);
        }
        pending.clear();
        ctx.deleteEventTimeTimer(window.maxTimestamp());
    }

    @Override
    public String toString() {
        return "EarlyFiringEventTimeTrigger(" + intervalMillis + " ms)";
    }
}
