package io.auditpipe.flink.alerts;

import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.util.Collector;

/**
 * Logins of one account on one server (key: server and user): two rules.
 *
 * <ul>
 *   <li>{@code brute_force}: {@code bruteForceFailures} failed logins within {@code
 *       bruteForceWindow} of event time. One alert per episode: failures that follow within the
 *       window of the last one belong to it and raise no second alert.
 *   <li>{@code login_after_failures}: a successful login preceded, within its window, by at least
 *       {@code loginAfterFailures} failures not already reported with an earlier success.
 * </ul>
 *
 * Events are evaluated as they arrive (alerts within the pipeline's latency, not the watermark's),
 * over their event times: an out-of-order failure still falls in the right window. One server's
 * records come in the order of its Kafka partition, so a replay from a checkpoint evaluates them in
 * the same order and raises the same alerts with the same ids. A failure older than the watermark
 * by more than the allowed lateness is not evaluated (metric loginsTooLateForAlerts). State is kept
 * for the longer window plus the lateness after the newest login, then cleared by a timer.
 */
public class FailedLoginsPerAccount extends FailedLoginsRule {
    private static final long serialVersionUID = 1L;
    public static final String BRUTE_FORCE = AlertRule.BRUTE_FORCE.id;
    public static final String LOGIN_AFTER_FAILURES = AlertRule.LOGIN_AFTER_FAILURES.id;

    public FailedLoginsPerAccount(AlertSettings settings) {
        super(settings, "failed-logins");
    }

    @Override
    long keepFor() {
        return Math.max(settings.bruteForceWindowMillis, settings.loginAfterFailuresWindowMillis)
                + settings.allowedLatenessMillis;
    }

    @Override
    public void processElement(AuditEvent e, Context ctx, Collector<Alert> out) throws Exception {
        long t = e.eventTimeMillis;
        if (tooLate(t, ctx)) return;
        TimedEntries s = failures.value();
        if (s == null) {
            if (!e.isFailedLogin()) return; // a login with no failures before it: nothing to keep
            s = new TimedEntries();
        }
        if (e.isFailedLogin()) {
            if (!s.add(t, e.id, e.user)) return;
            bruteForce(e, s, out);
        } else if (AuditEvent.AUTH_SUCCESS.equals(e.authOutcome)) {
            loginAfterFailures(e, s, out);
        }
        s.pruneBefore(s.maxTime() - keepFor());
        failures.update(s);
        ctx.timerService().registerEventTimeTimer(Math.max(t, s.maxTime()) + keepFor());
    }

    private void bruteForce(AuditEvent e, TimedEntries s, Collector<Alert> out) {
        long t = e.eventTimeMillis;
        long window = settings.bruteForceWindowMillis;
        if (t < s.suppressUntil) { // the episode already alerted on goes on
            s.suppressUntil = Math.max(s.suppressUntil, t + window);
            return;
        }
        TimedEntries.Window w = s.busiestWindowAround(t, window, false);
        if (w == null || w.count() < settings.bruteForceFailures) return;
        long first = s.times.get(w.first);
        long last = s.times.get(w.last);
        List<String> ids = s.idsIn(w);
        out.collect(
                Alert.of(
                                BRUTE_FORCE,
                                Alert.HIGH,
                                BRUTE_FORCE + "/" + e.server + "/" + e.user + "/" + first,
                                e.server,
                                e.user,
                                ids.size()
                                        + " failed logins for account '"
                                        + e.user
                                        + "' on "
                                        + e.server
                                        + " within "
                                        + seconds(last - first)
                                        + " (threshold "
                                        + settings.bruteForceFailures
                                        + " in "
                                        + seconds(window)
                                        + ")")
                        .withEvidence(ids, first, last)
                        .withControls(e.controls));
        s.suppressUntil = last + window;
    }

    private void loginAfterFailures(AuditEvent e, TimedEntries s, Collector<Alert> out) {
        long t = e.eventTimeMillis;
        long from = Math.max(t - settings.loginAfterFailuresWindowMillis - 1, s.consumedUpTo);
        int[] range = s.between(from, t + 1);
        int count = range == null ? 0 : range[1] - range[0] + 1;
        if (count < settings.loginAfterFailures) return;
        List<String> ids = new ArrayList<>(s.ids.subList(range[0], range[1] + 1));
        ids.add(e.id);
        out.collect(
                Alert.of(
                                LOGIN_AFTER_FAILURES,
                                Alert.CRITICAL,
                                LOGIN_AFTER_FAILURES + "/" + e.id,
                                e.server,
                                e.user,
                                "account '"
                                        + e.user
                                        + "' logged in on "
                                        + e.server
                                        + (e.ip != null && !e.ip.isEmpty() ? " from " + e.ip : "")
                                        + " after "
                                        + count
                                        + " failed logins within "
                                        + seconds(t - s.times.get(range[0])))
                        .withEvidence(ids, s.times.get(range[0]), t)
                        .withControls(e.controls));
        s.consumedUpTo = t;
    }

    /** A span of event time for a summary ("the same second": many formats write whole seconds). */
    static String seconds(long millis) {
        if (millis == 0) return "the same second";
        return millis % 1000 == 0
                ? (millis / 1000) + " s"
                : String.format(java.util.Locale.ROOT, "%.1f s", millis / 1000.0);
    }
}
