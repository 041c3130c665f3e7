package io.auditpipe.flink.alerts;

import io.auditpipe.parser.AuditEvent;
import java.util.List;
import java.util.TreeSet;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * {@code password_spray}: failed logins from one origin (its ip, else its host) on one server for
 * {@code sprayAccounts} distinct accounts within {@code sprayWindow} of event time (key: server and
 * origin). One alert per episode, as {@link FailedLoginsPerAccount} does for brute force, and
 * evaluated on arrival the same way.
 */
public class FailedLoginsPerOrigin extends KeyedProcessFunction<String, AuditEvent, Alert> {
    private static final long serialVersionUID = 1L;
    public static final String PASSWORD_SPRAY = AlertRule.PASSWORD_SPRAY.id;

    private final AlertSettings settings;
    private transient ValueState<TimedEntries> failures;
    private transient Counter tooLate;

    public FailedLoginsPerOrigin(AlertSettings settings) {
        this.settings = settings;
    }

    /**
     * Where a login came from: the ip when the record has one, else the host; null when neither.
     */
    public static String origin(AuditEvent e) {
        if (e.ip != null && !e.ip.isEmpty()) return e.ip;
        if (e.host != null && !e.host.isEmpty()) return e.host;
        return null;
    }

    @Override
    public void open(OpenContext context) {
        failures =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        "failed-logins-by-origin", TimedEntries.class));
        tooLate = getRuntimeContext().getMetricGroup().counter("loginsTooLateForAlerts");
    }

    @Override
    public void processElement(AuditEvent e, Context ctx, Collector<Alert> out) throws Exception {
        if (!e.isFailedLogin()) return;
        long t = e.eventTimeMillis;
        long watermark = ctx.timerService().currentWatermark();
        if (watermark != Long.MIN_VALUE && t < watermark - settings.allowedLatenessMillis) {
            tooLate.inc();
            return;
        }
        long window = settings.sprayWindowMillis;
        TimedEntries s = failures.value();
        if (s == null) s = new TimedEntries();
        if (!s.add(t, e.id, e.user == null ? "" : e.user)) return;
        if (t < s.suppressUntil) {
            s.suppressUntil = Math.max(s.suppressUntil, t + window);
        } else {
            TimedEntries.Window w = s.busiestWindowAround(t, window, true);
            if (w != null && w.distinctSubjects >= settings.sprayAccounts) {
                long first = s.times.get(w.first);
                long last = s.times.get(w.last);
                List<String> ids = s.idsIn(w);
                TreeSet<String> accounts = new TreeSet<>(s.subjects.subList(w.first, w.last + 1));
                String origin = origin(e);
                out.collect(
                        Alert.of(
                                        PASSWORD_SPRAY,
                                        Alert.HIGH,
                                        PASSWORD_SPRAY
                                                + "/"
                                                + e.server
                                                + "/"
                                                + origin
                                                + "/"
                                                + first,
                                        e.server,
                                        origin,
                                        "failed logins from "
                                                + origin
                                                + " on "
                                                + e.server
                                                + " for "
                                                + accounts.size()
                                                + " accounts within "
                                                + FailedLoginsPerAccount.seconds(last - first)
                                                + ": "
                                                + String.join(
                                                        ", ",
                                                        accounts.size() > 10
                                                                ? List.copyOf(accounts)
                                                                        .subList(0, 10)
                                                                : accounts)
                                                + (accounts.size() > 10 ? ", ..." : ""))
                                .withEvidence(ids, first, last)
                                .withControls(e.controls));
                s.suppressUntil = last + window;
            }
        }
        s.pruneBefore(s.maxTime() - window - settings.allowedLatenessMillis);
        failures.update(s);
        ctx.timerService()
                .registerEventTimeTimer(s.maxTime() + window + settings.allowedLatenessMillis);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Alert> out) throws Exception {
        TimedEntries s = failures.value();
        long keep = settings.sprayWindowMillis + settings.allowedLatenessMillis;
        if (s != null && s.maxTime() + keep <= timestamp && s.suppressUntil <= timestamp) {
            failures.clear();
        }
    }
}
