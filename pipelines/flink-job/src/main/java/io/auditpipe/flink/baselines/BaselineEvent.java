package io.auditpipe.flink.baselines;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * What a principal's baseline needs of a stored event, and nothing more: it crosses the shuffle to
 * {@link PrincipalBaselines} (keyed by server and user). A Flink POJO; its list is an ArrayList.
 */
public class BaselineEvent {
    public String id;
    public String server;
    public String user;

    /** Where it came from: the ip, else the host; null when the format gives neither. */
    public String origin;

    public String principalClass;
    public long eventTimeMillis;

    /** The classified tables it touched, then their data classes; null for none. */
    public List<String> objects;

    /**
     * Outside every configured business-hours window: true; inside one: false; none configured:
     * null.
     */
    public Boolean afterHours;

    /** The compliance controls it evidences (an alert carries its evidence's). */
    public List<String> controls;

    public BaselineEvent() {}

    /**
     * The baseline fields of a stored event; null for the server's own records (no user) and for a
     * failed login, which is someone trying the account, not the principal at work.
     */
    public static BaselineEvent of(AuditEvent e, ComplianceSettings compliance) {
        if (e.user == null || e.user.isEmpty() || e.server == null) return null;
        if (AuditEvent.AUTH_FAILURE.equals(e.authOutcome)) return null;
        BaselineEvent b = new BaselineEvent();
        b.id = e.id;
        b.server = e.server;
        b.user = e.user;
        b.origin =
                e.ip != null && !e.ip.isEmpty()
                        ? e.ip
                        : e.host != null && !e.host.isEmpty() ? e.host : null;
        b.principalClass = e.principalClass;
        b.eventTimeMillis = e.eventTimeMillis;
        if (e.dataClasses != null && !e.dataClasses.isEmpty()) {
            List<String> objects = new ArrayList<>();
            if (e.tables != null) {
                for (String t : e.tables) {
                    if (!compliance.dataClassesOf(t).isEmpty() && !objects.contains(t))
                        objects.add(t);
                }
            }
            for (String c : e.dataClasses) {
                if (!objects.contains(c)) objects.add(c);
            }
            b.objects = objects;
        }
        b.afterHours = compliance.afterHours(e.eventTimeMillis);
        b.controls =
                e.controls == null || e.controls.isEmpty() ? null : new ArrayList<>(e.controls);
        return b;
    }

    /** The key of its principal's baseline: server and user. */
    public String key() {
        return server + "\u0000" + user;
    }

    public boolean privileged() {
        return ComplianceSettings.ADMINISTRATOR.equals(principalClass);
    }
}
