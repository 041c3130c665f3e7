package io.auditpipe.flink.alerts;

import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * {@code unauthorized_data_access}: a principal touched a data class it is not allowed for (the
 * event's {@code access_violations}). Keyed by server, user and data class; one alert per window of
 * {@code unauthorizedAccessWindow} (aligned to the epoch, event time), on the first such access in
 * it: a service account reading a table in a loop raises one alert every window, not one per
 * statement. The id holds the window's start, so a replay gives the same id. The input is one event
 * per violated class ({@link #perClass}).
 */
public class UnauthorizedAccess extends KeyedProcessFunction<String, AuditEvent, Alert> {
    private static final long serialVersionUID = 1L;
    public static final String RULE = AlertRule.UNAUTHORIZED_DATA_ACCESS.id;

    private final AlertSettings settings;
    private transient ValueState<Long> alertedWindow;

    public UnauthorizedAccess(AlertSettings settings) {
        this.settings = settings;
    }

    /** The event's violations, one record each: the class in {@code accessViolations} alone. */
    public static void perClass(AuditEvent e, Collector<AuditEvent> out) {
        if (e.accessViolations == null) return;
        for (String c : e.accessViolations) {
            if (e.accessViolations.size() == 1) {
                out.collect(e);
            } else {
                AuditEvent one = e.copy();
                one.accessViolations = List.of(c);
                out.collect(one);
            }
        }
    }

    public static String key(AuditEvent e) {
        return e.server + "\u0000" + e.user + "\u0000" + e.accessViolations.get(0);
    }

    @Override
    public void open(OpenContext context) {
        alertedWindow =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("alerted-window", Long.class));
    }

    @Override
    public void processElement(AuditEvent e, Context ctx, Collector<Alert> out) throws Exception {
        long length = settings.unauthorizedAccessWindowMillis;
        long start = Math.floorDiv(e.eventTimeMillis, length) * length;
        Long alerted = alertedWindow.value();
        if (alerted != null && alerted == start) return;
        String dataClass = e.accessViolations.get(0);
        out.collect(
                Alert.of(
                                RULE,
                                Alert.HIGH,
                                RULE + "/" + e.server + "/" + e.user + "/" + dataClass + "/"
                                        + start,
                                e.server,
                                EventRules.principal(e),
                                EventRules.principal(e)
                                        + " ("
                                        + e.principalClass
                                        + ") touched "
                                        + dataClass
                                        + " data ("
                                        + String.join(", ", e.tables)
                                        + ") on "
                                        + e.server
                                        + " and is not allowed to; first time in the window from "
                                        + Instant.ofEpochMilli(start)
                                        + ": "
                                        + EventRules.statement(e))
                        .withEvidence(List.of(e.id), e.eventTimeMillis, e.eventTimeMillis)
                        .withControls(e.controls));
        if (alerted == null || start > alerted) {
            alertedWindow.update(start);
            ctx.timerService()
                    .registerEventTimeTimer(start + length + settings.allowedLatenessMillis);
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        Long alerted = alertedWindow.value();
        if (alerted != null
                && alerted
                                + settings.unauthorizedAccessWindowMillis
                                + settings.allowedLatenessMillis
                        <= timestamp) {
            alertedWindow.clear();
        }
    }
}
