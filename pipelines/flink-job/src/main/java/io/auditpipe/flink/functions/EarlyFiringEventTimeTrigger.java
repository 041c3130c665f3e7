package io.auditpipe.flink.functions;

import java.time.Duration;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * Event-time trigger that also fires early: a processing-time timer {@code interval} after the
 * first element since the last firing. Every firing emits the window's full count (FIRE, never
 * PURGE), so the store always holds the latest count and a quiet stream's last minute is written
 * without waiting for a watermark that may never come. State is cleared with the window.
 *
 * <p>Late elements (within the allowed lateness) fire the same way, {@code interval} after the
 * first since the last firing, not each at once: a server whose events arrive well behind another's
 * on the same Kafka partition (the partition's watermark) has every event late, and a firing per
 * event made the stats writer upsert each key in every batch it sent, a quarter more of the store's
 * CPU per event at 10,000 events/s (docs/architecture.md). The window's cleanup (its end plus the
 * allowed lateness) fires first when a firing is still due, so no count is lost to it
 * (WindowOperator asks the trigger at the cleanup timer before it drops the window's state).
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
    public TriggerResult onElement(
            Object element, long timestamp, TimeWindow window, TriggerContext ctx)
            throws Exception {
        if (window.maxTimestamp() > ctx.getCurrentWatermark()) {
            ctx.registerEventTimeTimer(window.maxTimestamp());
        } // else late but allowed: counted, written with the next firing
        ValueState<Long> pending = ctx.getPartitionedState(pendingTimer);
        if (pending.value() == null) {
            long at = ctx.getCurrentProcessingTime() + intervalMillis;
            ctx.registerProcessingTimeTimer(at);
            pending.update(at);
        }
        return TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow window, TriggerContext ctx)
            throws Exception {
        ctx.getPartitionedState(pendingTimer).clear();
        return TriggerResult.FIRE;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow window, TriggerContext ctx)
            throws Exception {
        ValueState<Long> pending = ctx.getPartitionedState(pendingTimer);
        Long due = pending.value();
        if (time
                == window
                        // the minute closes: its full count, and no early firing after it
                        .maxTimestamp()) {
            if (due != null) {
                ctx.deleteProcessingTimeTimer(due);
                pending.clear();
            }
            return TriggerResult.FIRE;
        }
        // the only other event-time timer is the window's cleanup: a firing still due happens now
        return due != null ? TriggerResult.FIRE : TriggerResult.CONTINUE;
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
