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
 * travels alone: the alert rules); inside the job's IngestedEvent it crosses shuffles with the
 * job's IngestedEventSerializer, so a field added here must be written there too (its test fails
 * until it is). Fields the source format does not carry stay null; nothing is invented.
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

    /**
     * Schema changes only: whether the event's time is inside a configured change window (none
     * configured: false).
     */
    public Boolean inChangeWindow;

    /**
     * Events touching classified data only, when business hours are configured: outside every
     * business-hours window.
     */
    public Boolean afterHours;

    public AuditEvent() {}

    /**
     * A shallow copy: the same values, the lists and the map shared (replace them, never change
     * them).
     */
    public AuditEvent copy() {
        AuditEvent c = new AuditEvent();
        try {
            for (java.lang.reflect.Field f : FIELDS) f.set(c, f.get(this));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return c;
    }

    public boolean isLoginEvent() {
        return authOutcome != null;
    }

    public boolean isFailedLogin() {
        return AUTH_FAILURE.equals(authOutcome);
    }

    /** Where the event was read: its server, format, source file and collector. */
    public void setSource(SourceDescriptor source) {
        server = source.server();
        format = source.format();
        sourceFile = source.source();
        collector = source.collector();
    }

    /**
     * A login's outcome by the status the server wrote for it: none or 0 success, an error code
     * failure.
     */
    public String loginOutcome() {
        return status == null || status == 0 ? AUTH_SUCCESS : AUTH_FAILURE;
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

    /** Every instance field, in declaration order: what {@link #equals} compares. */
    private static final java.lang.reflect.Field[] FIELDS =
            java.util.Arrays.stream(AuditEvent.class.getDeclaredFields())
                    .filter(f -> !java.lang.reflect.Modifier.isStatic(f.getModifiers()))
                    .toArray(java.lang.reflect.Field[]::new);

    /**
     * Equal when every field is: a field added to the class is compared without being listed here.
     */
    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (o == null || o.getClass() != AuditEvent.class || getClass() != AuditEvent.class)
            return false;
        try {
            for (java.lang.reflect.Field f : FIELDS) {
                if (!Objects.equals(f.get(this), f.get(o))) return false;
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, eventTimeMillis);
    }

    @Override
    public String toString() {
        return "AuditEvent{id="
                + id
                + ", eventName="
                + eventName
                + ", status="
                + status
                + ", user="
                + user
                + "}";
    }
}
