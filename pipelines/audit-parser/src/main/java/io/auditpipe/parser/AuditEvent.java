package io.auditpipe.parser;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One audit record in the normalized event model (schemas/audit-event.schema.json documents every
 * field; the store document uses the snake_case names given there).
 *
 * <p>Public fields and a no-argument constructor so that Flink serializes it as a POJO (where it
 * travels alone: the alert rules); inside the job's IngestedEvent it crosses shuffles with the job's
 * IngestedEventSerializer, so a field added here must be written there too (its test fails until it
 * is). Fields the source format does not carry stay null; nothing is invented.
 */
public class AuditEvent implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Authentication outcome of login-type events; null for every other event. */
    public static final String AUTH_SUCCESS = "success";
    public static final String AUTH_FAILURE = "failure";

    public String id;
    public String server;
    public String format;
    public String sourceFile;
    public String collector;
    public String recordId;
    public long eventTimeMillis;
    public String eventName;
    public String commandClass;
    public Long connectionId;
    public Integer status;
    public String sqltext;
    public String user;
    public String userRaw;
    public String privUser;
    public String osUser;
    public String osLogin;
    public String proxyUser;
    public String host;
    public String ip;
    public String db;
    public String authOutcome;
    /** Fields of the source record that the model has no place for, kept as text. */
    public Map<String, String> extra = new LinkedHashMap<>();

    // What enrichment adds (io.auditpipe.enrich.Enricher; null until then). docs/compliance.md.
    /** Taxonomy category (authentication, account_management, schema_change, data_read, ...). */
    public String category;
    /** The precise action (login_failed, grant, create_table, select, audit_stop, ...). */
    public String action;
    /** Tables the statement or record touches, {@code db.table}, lower case. */
    public java.util.List<String> tables;
    /** Why the tables are unknown: the statement did not parse (then {@link #tables} is empty). */
    public String tablesError;
    /** Data classes of the tables touched (pci_cardholder, hipaa_ephi, sox_financial). */
    public java.util.List<String> dataClasses;
    /** administrator, service_account or person. */
    public String principalClass;
    /** Data classes touched by a principal not allowed for them. */
    public java.util.List<String> accessViolations;
    /** Compliance controls the event evidences (schemas/compliance-controls.csv). */
    public java.util.List<String> controls;
    /** What was masked in the event (pan, or a configured pattern's name). */
    public java.util.List<String> masked;
    /** Schema changes only: whether the event's time is inside a configured change window (none configured: false). */
    public Boolean inChangeWindow;
    /** Events touching classified data only, when business hours are configured: outside every business-hours window. */
    public Boolean afterHours;

    public AuditEvent() {}

    public boolean isLoginEvent() {
        return authOutcome != null;
    }

    public boolean isFailedLogin() {
        return AUTH_FAILURE.equals(authOutcome);
    }

    /**
     * Success or failure of whatever the event records (PCI DSS 10.2.2 asks every record for it):
     * the login outcome for logins, else by the status the server wrote (0 success, an error code
     * failure); null when the record carries neither (e.g. MariaDB's table events).
     */
    public String outcome() {
        if (authOutcome != null) return authOutcome;
        if (status == null) return null;
        return status == 0 ? AUTH_SUCCESS : AUTH_FAILURE;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AuditEvent)) return false;
        AuditEvent e = (AuditEvent) o;
        return eventTimeMillis == e.eventTimeMillis && Objects.equals(id, e.id)
                && Objects.equals(server, e.server) && Objects.equals(format, e.format)
                && Objects.equals(sourceFile, e.sourceFile) && Objects.equals(collector, e.collector)
                && Objects.equals(recordId, e.recordId) && Objects.equals(eventName, e.eventName)
                && Objects.equals(commandClass, e.commandClass) && Objects.equals(connectionId, e.connectionId)
                && Objects.equals(status, e.status) && Objects.equals(sqltext, e.sqltext)
                && Objects.equals(user, e.user) && Objects.equals(userRaw, e.userRaw)
                && Objects.equals(privUser, e.privUser) && Objects.equals(osUser, e.osUser)
                && Objects.equals(osLogin, e.osLogin) && Objects.equals(proxyUser, e.proxyUser)
                && Objects.equals(host, e.host) && Objects.equals(ip, e.ip) && Objects.equals(db, e.db)
                && Objects.equals(authOutcome, e.authOutcome) && Objects.equals(extra, e.extra)
                && Objects.equals(category, e.category) && Objects.equals(action, e.action)
                && Objects.equals(tables, e.tables) && Objects.equals(tablesError, e.tablesError)
                && Objects.equals(dataClasses, e.dataClasses) && Objects.equals(principalClass, e.principalClass)
                && Objects.equals(accessViolations, e.accessViolations) && Objects.equals(controls, e.controls)
                && Objects.equals(masked, e.masked) && Objects.equals(inChangeWindow, e.inChangeWindow)
                && Objects.equals(afterHours, e.afterHours);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, eventTimeMillis);
    }

    @Override
    public String toString() {
        return "AuditEvent{id=" + id + ", eventName=" + eventName + ", status=" + status + ", user=" + user + "}";
    }
}
