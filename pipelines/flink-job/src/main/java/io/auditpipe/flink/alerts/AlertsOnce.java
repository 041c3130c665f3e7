package io.auditpipe.flink.alerts;

import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Keyed by alert id: passes the first alert of each id, and drops the ones raised again with that
 * id while it is remembered.
 *
 * <p>The rules read the raw topic on a path of their own (AuditPipeline: they do not wait for the
 * store), so they see the copies of lines a collector re-sends, which the store path drops in
 * {@code first-copies-in-chain}. Counting rules keep each event id once already ({@link
 * TimedEntries}, {@link RecordGaps}); a rule that alerts on one event ({@link EventRules}, {@code
 * login_after_failures}) raises the same id again for a copy of that event. Alerts are few, so
 * remembering their ids is cheap: an id is kept until the watermark passes its last event time (or
 * the watermark when it was raised, if later) by {@link #REMEMBERED}, an hour of event time, longer
 * than a collector's re-sent lines lag behind (its last saved position).
 *
 * <p>A replay from a checkpoint restores the ids remembered at the checkpoint, so an alert raised
 * after it is raised again (the store keeps it once by id; topic and webhook are at least once,
 * docs/alerts.md).
 */
public class AlertsOnce extends KeyedProcessFunction<String, Alert, Alert> {
    private static final long serialVersionUID = 1L;
    public static final Duration REMEMBERED = Duration.ofHours(1);

    /** When to forget this id (event time). */
    private transient ValueState<Long> forgetAt;

    private transient Counter repeated;

    @Override
    public void open(OpenContext context) {
        forgetAt =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("alert-forget-at", Types.LONG));
        repeated = getRuntimeContext().getMetricGroup().counter("alertsRaisedAgain");
    }

    @Override
    public void processElement(Alert alert, Context ctx, Collector<Alert> out) throws Exception {
        if (forgetAt.value() != null) {
            repeated.inc();
            return;
        }
        long watermark = ctx.timerService().currentWatermark();
        long at =
                Math.max(
                                alert.lastEventMillis,
                                watermark == Long.MIN_VALUE ? alert.lastEventMillis : watermark)
                        + REMEMBERED.toMillis();
        forgetAt.update(at);
        ctx.timerService().registerEventTimeTimer(at);
        out.collect(alert);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        Long at = forgetAt.value();
        if (at != null && at <= timestamp) forgetAt.clear();
    }
}
