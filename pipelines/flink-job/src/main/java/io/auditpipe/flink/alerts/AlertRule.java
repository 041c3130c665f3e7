package io.auditpipe.flink.alerts;

import java.util.List;

/**
 * Every alert rule of the job as data: its name (the alert's {@code rule}), the severities it
 * raises, and the controls whose review it serves (schemas/compliance-controls.csv). An alert's own
 * {@code controls} are those of its evidence events. Published in schemas/job-contract.json, from
 * which the CLI takes the rule names it offers; docs/alerts.md describes each.
 */
public enum AlertRule {
    BRUTE_FORCE(
            "brute_force",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"),
            "Failed logins of one account within a window reach a threshold."),
    PASSWORD_SPRAY(
            "password_spray",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"),
            "Failed logins from one origin for a number of distinct accounts within a window."),
    LOGIN_AFTER_FAILURES(
            "login_after_failures",
            List.of(Alert.CRITICAL),
            List.of("PCI-DSS-10.2.1.4", "HIPAA-164.308(a)(5)(ii)(C)"),
            "A successful login preceded within a window by failures of the account."),
    ACCOUNT_CHANGE(
            "account_change",
            List.of(Alert.HIGH, Alert.MEDIUM),
            List.of("PCI-DSS-10.2.1.5", "SOX-ITGC-ACCESS"),
            "An account or privilege change (medium when the server refused it)."),
    UNAUTHORIZED_DATA_ACCESS(
            "unauthorized_data_access",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.1", "HIPAA-164.312(b)", "SOX-ITGC-ACCESS"),
            "A principal touched a data class it is not allowed for."),
    AUDIT_STOPPED(
            "audit_stopped",
            List.of(Alert.CRITICAL, Alert.HIGH),
            List.of("PCI-DSS-10.2.1.6", "SOX-ITGC-CHANGE"),
            "Audit logging turned off, the audit plugin removed, or the log's stop record (high)."),
    DDL_OUTSIDE_CHANGE_WINDOW(
            "ddl_outside_change_window",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.7", "SOX-ITGC-CHANGE"),
            "A schema change on a classified table outside every change window."),
    RECORD_GAP(
            "record_gap",
            GapClass.severities(),
            List.of("PCI-DSS-10.2.1.6"),
            "A record missing from a server's own numbered sequence, or a new sequence started; classified"
                    + " (gap_class: "
                    + GapClass.listed()
                    + ")."),
    FIRST_ACCESS(
            "first_access",
            List.of(Alert.MEDIUM),
            List.of("PCI-DSS-10.2.1.1", "HIPAA-164.312(b)", "SOX-ITGC-ACCESS"),
            "A principal touched a classified table or data class for the first time since its baseline began (learned)."),
    OFF_HOURS(
            "off_hours",
            List.of(Alert.MEDIUM),
            List.of("PCI-DSS-10.2.1.1", "HIPAA-164.312(b)"),
            "A principal active in an hour of the day it does not work in (learned), or outside the business hours."),
    VOLUME_SPIKE(
            "volume_spike",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.1", "HIPAA-164.312(b)"),
            "A principal's records in a clock hour far above its own baseline per active hour (learned)."),
    NEW_ORIGIN(
            "new_origin",
            List.of(Alert.HIGH),
            List.of("PCI-DSS-10.2.1.2", "SOX-ITGC-ACCESS"),
            "An administrator connected from an origin (ip, else host) not seen for it since its baseline began (learned)."),
    INTEGRITY(
            "integrity",
            List.of(Alert.CRITICAL),
            List.of(),
            "Stored evidence changed, removed or added after the job wrote it, or a chain head it did not sign:"
                    + " raised by the continuous verification of the store (auditpipe's supervisor), not by the job."),
    REVIEW_OVERDUE(
            "review_overdue",
            List.of(Alert.MEDIUM),
            List.of(),
            "A day of a regime reviewed daily (review.regimes) with no reviewer's decision review.deadline after it"
                    + " ended: raised beside the continuous verification (auditpipe's supervisor), not by the job.");

    /** The rule's name, as alerts, the CLI and the docs spell it. */
    public final String id;

    /** The severities it raises, the usual one first. */
    public final List<String> severities;

    /** The controls (schemas/compliance-controls.csv) whose review the rule serves. */
    public final List<String> controls;

    public final String description;

    AlertRule(String id, List<String> severities, List<String> controls, String description) {
        this.id = id;
        this.severities = severities;
        this.controls = controls;
        this.description = description;
    }

    /** The severities an alert may have, most severe first. */
    public static final List<String> SEVERITIES =
            List.of(Alert.CRITICAL, Alert.HIGH, Alert.MEDIUM, Alert.LOW);
}
