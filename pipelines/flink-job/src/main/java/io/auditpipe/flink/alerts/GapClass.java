package io.auditpipe.flink.alerts;

import java.util.List;

/**
 * What a {@code record_gap} alert says of its gap: each class with the severity it raises and what
 * it means (docs/alerts.md "Record gaps, classified"). Published in schemas/job-contract.json; the
 * alert carries the class as {@code gap_class}, and {@code verify} and the reports show it.
 */
public enum GapClass {
    UNEXPLAINED(
            "unexplained",
            Alert.HIGH,
            "Numbers missing with no dead letter for them: deleted from the log, lost on the way, or dropped by"
                    + " the plugin itself (Percona's PERFORMANCE strategy drops records when its buffer is full and"
                    + " says so only in the server's status, Audit_log_buffer_size_overflow, not in the log)."),
    COLLECTOR_LOSS(
            "collector_loss",
            Alert.HIGH,
            "The collector reports the missing numbers lost: they follow the last line it shipped, and the"
                    + " server had rotated them away from the disk while it was down (the local collector's"
                    + " catch-up; its dead letter holds that last line and says why). The records are gone;"
                    + " what is known is where and why."),
    DEAD_LETTER(
            "dead_letter",
            Alert.MEDIUM,
            "Every missing number is a line the job could not read (unparseable, or cut by the collector):"
                    + " kept whole, with its reason, in the dead letters the alert names."),
    RESTART(
            "restart",
            Alert.LOW,
            "The record numbering started again: the audit plugin's start record is number 1 of a new sequence"
                    + " (the server or the plugin started). Nothing is missing at the new sequence's start.");

    /** The class as the alert's {@code gap_class} spells it. */
    public final String id;

    public final String severity;
    public final String description;

    GapClass(String id, String severity, String description) {
        this.id = id;
        this.severity = severity;
        this.description = description;
    }

    /** Every severity a record_gap alert may have, as {@link AlertRule} lists them. */
    static List<String> severities() {
        return java.util.Arrays.stream(values()).map(c -> c.severity).distinct().toList();
    }

    /**
     * The classes with their severities, as one phrase: "unexplained high, dead_letter medium,
     * ...".
     */
    static String listed() {
        return String.join(
                ", ", java.util.Arrays.stream(values()).map(c -> c.id + " " + c.severity).toList());
    }
}
