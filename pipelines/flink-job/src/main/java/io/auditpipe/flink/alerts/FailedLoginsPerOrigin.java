package io.auditpipe.flink.alerts;

import io.auditpipe.parser.AuditEvent;
import java.util.List;
import java.util.TreeSet;
import org.apache.flink.util.Collector;

/**
 * {@code password_spray}: failed logins from one origin (its ip, else its host) on one server for
 * {@code sprayAccounts} distinct accounts within {@code sprayWindow} of event time (key: server and
 * origin). One alert per episode, as {@link FailedLoginsPerAccount} does for brute force, and
 * evaluated on arrival the same way.
 */
public class FailedLoginsPerOrigin extends FailedLoginsRule {
    private static final long serialVersionUID = 1L;
    public static final String PASSWORD_SPRAY = AlertRule.PASSWORD_SPRAY.id;

    public FailedLoginsPerOrigin(AlertSettings settings) {
        super(settings, "failed-logins-by-origin");
    }

    @Override
    long keepFor() {
        return settings.sprayWindowMillis + settings.allowedLatenessMillis;
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
    public void processElement(AuditEvent e, Context ctx, Collector<Alert> out) throws Exception {
        if (!e.isFailedLogin()) return;
        long t = e.eventTimeMillis;
        if (tooLate(t, ctx)) return;
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
        s.pruneBefore(s.maxTime() - keepFor());
        failures.update(s);
        ctx.timerService().registerEventTimeTimer(s.maxTime() + keepFor());
    }
}
