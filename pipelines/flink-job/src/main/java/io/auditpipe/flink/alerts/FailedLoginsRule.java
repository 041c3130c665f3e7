package io.auditpipe.flink.alerts;

import io.auditpipe.parser.AuditEvent;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * What the failed-login rules share ({@link FailedLoginsPerAccount}, {@link
 * FailedLoginsPerOrigin}): the key's logins in event-time order (one {@link TimedEntries} state of
 * the rule's own name), logins older than the watermark by more than the allowed lateness left out
 * (metric loginsTooLateForAlerts), and the state cleared by a timer once it is {@link #keepFor()}
 * older than its newest entry and no episode is being suppressed.
 */
abstract class FailedLoginsRule extends KeyedProcessFunction<String, AuditEvent, Alert> {
    private static final long serialVersionUID = 1L;

    final AlertSettings settings;
    private final String stateName;
    transient ValueState<TimedEntries> failures;
    private transient Counter tooLate;

    FailedLoginsRule(AlertSettings settings, String stateName) {
        this.settings = settings;
        this.stateName = stateName;
    }

    /** How long the logins are kept after the newest of them. */
    abstract long keepFor();

    @Override
    public void open(OpenContext context) {
        failures =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>(stateName, TimedEntries.class));
        tooLate = getRuntimeContext().getMetricGroup().counter("loginsTooLateForAlerts");
    }

    /** Whether a login of time {@code t} comes too late to be evaluated (then counted). */
    boolean tooLate(long t, Context ctx) {
        long watermark = ctx.timerService().currentWatermark();
        if (watermark != Long.MIN_VALUE && t < watermark - settings.allowedLatenessMillis) {
            tooLate.inc();
            return true;
        }
        return false;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        TimedEntries s = failures.value();
        if (s != null && s.maxTime() + keepFor() <= timestamp && s.suppressUntil <= timestamp) {
            failures.clear();
        }
    }
}
