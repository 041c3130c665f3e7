package io.auditpipe.enrich;

import io.auditpipe.parser.AuditEvent;
import java.util.Locale;
import java.util.Map;

/**
 * The events a reviewer must see one by one, whatever the period (docs/compliance.md "Evidence"):
 * the job keeps them in the evidence collection for the evidence retention, beside the capped
 * collection that holds every event for minutes. Each kind is also a condition on the stored
 * document ({@link #condition()}, published in the job contract): the catalog queries that only
 * ever match such events run on the evidence collection unchanged, and a test checks the two agree.
 */
public enum EvidenceKind {
    FAILED_LOGIN(
            "a failed login or change of user", Map.of("auth_outcome", AuditEvent.AUTH_FAILURE)),
    ACCOUNT_CHANGE(
            "an account or privilege change (CREATE/DROP/ALTER USER, GRANT, REVOKE, SET PASSWORD ...)",
            Map.of("category", EventTaxonomy.ACCOUNT_MANAGEMENT)),
    CLASSIFIED_DATA(
            "an event touching a classified table: its reads and writes, DDL on it, access by principals"
                    + " not allowed for its class",
            Map.of("data_classes.0", Map.of("$exists", true))),
    AUDIT_SYSTEM(
            "the audit log started, stopped, disabled or reconfigured",
            Map.of("category", EventTaxonomy.AUDIT_SYSTEM));

    public final String id;
    public final String description;
    private final Map<String, Object> condition;

    EvidenceKind(String description, Map<String, Object> condition) {
        this.id = name().toLowerCase(Locale.ROOT);
        this.description = description;
        this.condition = condition;
    }

    /** The kind as a filter on the stored event document (one field, MongoDB's query language). */
    public Map<String, Object> condition() {
        return condition;
    }

    public boolean matches(AuditEvent e) {
        return switch (this) {
            case FAILED_LOGIN -> e.isFailedLogin();
            case ACCOUNT_CHANGE -> EventTaxonomy.ACCOUNT_MANAGEMENT.equals(e.category);
            case CLASSIFIED_DATA -> e.dataClasses != null && !e.dataClasses.isEmpty();
            case AUDIT_SYSTEM -> EventTaxonomy.AUDIT_SYSTEM.equals(e.category);
        };
    }

    /** Whether the event is evidence of any kind. */
    public static boolean any(AuditEvent e) {
        for (EvidenceKind k : values()) {
            if (k.matches(e)) return true;
        }
        return false;
    }
}
