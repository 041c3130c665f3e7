package io.auditpipe.flink.alerts;

import io.auditpipe.enrich.EventTaxonomy;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.List;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * The rules one event is enough for (no state; the alert id is the rule and the event's id):
 *
 * <ul>
 *   <li>{@code account_change}: any account or privilege change (category account_management); high
 *       when it succeeded, medium when the server refused it;
 *   <li>{@code audit_stopped}: audit logging stopped, disabled or its plugin removed (critical;
 *       high for the audit log's own stop record, which a server restart writes too);
 *   <li>{@code ddl_outside_change_window}: a schema change on a classified table at a time outside
 *       every configured change window (high).
 * </ul>
 */
public class EventRules implements FlatMapFunction<AuditEvent, Alert> {
    private static final long serialVersionUID = 1L;
    public static final String ACCOUNT_CHANGE = AlertRule.ACCOUNT_CHANGE.id;
    public static final String AUDIT_STOPPED = AlertRule.AUDIT_STOPPED.id;
    public static final String DDL_OUTSIDE_CHANGE_WINDOW = AlertRule.DDL_OUTSIDE_CHANGE_WINDOW.id;

    private final AlertSettings settings;

    public EventRules(AlertSettings settings) {
        this.settings = settings;
    }

    @Override
    public void flatMap(AuditEvent e, Collector<Alert> out) {
        if (EventTaxonomy.ACCOUNT_MANAGEMENT.equals(e.category)) {
            boolean failed = AuditEvent.AUTH_FAILURE.equals(e.outcome());
            out.collect(
                    alert(
                            ACCOUNT_CHANGE,
                            failed ? Alert.MEDIUM : Alert.HIGH,
                            e,
                            principal(e)
                                    + (failed
                                            ? " tried to change accounts or privileges (refused, status "
                                                    + e.status
                                                    + ")"
                                            : " changed accounts or privileges")
                                    + " on "
                                    + e.server
                                    + ": "
                                    + statement(e)));
        }
        if (EventTaxonomy.AUDIT_SYSTEM.equals(e.category)
                && EventTaxonomy.AUDIT_STOPPED.contains(e.action)) {
            boolean byStatement = !"audit_stop".equals(e.action);
            String what =
                    "audit_plugin_removed".equals(e.action)
                            ? "the audit plugin was removed"
                            : "audit_disabled".equals(e.action)
                                    ? "audit logging was turned off"
                                    : "the audit log stopped";
            out.collect(
                    alert(
                            AUDIT_STOPPED,
                            byStatement ? Alert.CRITICAL : Alert.HIGH,
                            e,
                            what
                                    + " on "
                                    + e.server
                                    + (byStatement
                                            ? " by " + principal(e) + ": " + statement(e)
                                            : " (its own stop record; a server shutdown writes one too)")));
        }
        if (EventTaxonomy.SCHEMA_CHANGE.equals(e.category)
                && e.dataClasses != null
                && !e.dataClasses.isEmpty()
                && !AuditEvent.AUTH_FAILURE.equals(e.outcome())
                && !settings.compliance.inChangeWindow(e.eventTimeMillis)) {
            out.collect(
                    alert(
                            DDL_OUTSIDE_CHANGE_WINDOW,
                            Alert.HIGH,
                            e,
                            principal(e)
                                    + " changed "
                                    + String.join(", ", e.tables)
                                    + " ("
                                    + String.join(", ", e.dataClasses)
                                    + ") on "
                                    + e.server
                                    + " at "
                                    + Instant.ofEpochMilli(e.eventTimeMillis)
                                    + ", outside every change window"
                                    + (settings.compliance.changeWindows().isEmpty()
                                            ? " (none is configured)"
                                            : " (" + settings.compliance.changeWindows() + ")")
                                    + ": "
                                    + statement(e)));
        }
    }

    static Alert alert(String rule, String severity, AuditEvent e, String summary) {
        return Alert.of(rule, severity, rule + "/" + e.id, e.server, principal(e), summary)
                .withEvidence(List.of(e.id), e.eventTimeMillis, e.eventTimeMillis)
                .withControls(e.controls);
    }

    static String principal(AuditEvent e) {
        if (e.user == null || e.user.isEmpty()) return "(no user)";
        return e.host == null || e.host.isEmpty() ? e.user : e.user + "@" + e.host;
    }

    /** The (masked) statement, at most 300 characters. */
    static String statement(AuditEvent e) {
        String s = e.sqltext == null ? e.action : e.sqltext.strip().replaceAll("\\s+", " ");
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
