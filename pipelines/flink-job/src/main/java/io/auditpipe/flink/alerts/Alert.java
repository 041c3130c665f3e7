package io.auditpipe.flink.alerts;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Something a reviewer must look at now (docs/alerts.md): which rule fired, how bad it is, a
 * sentence saying what happened, and the events that show it.
 *
 * <p>The id is deterministic: made of the rule and what the alert is about (the account, the
 * origin, the first evidence event), never of the time it was raised, so a replay after a restart
 * yields the same id and the store, the topic's consumers and the webhook's receiver keep it once.
 */
public class Alert implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String CRITICAL = "critical";
    public static final String HIGH = "high";
    public static final String MEDIUM = "medium";

    /** For the review, nobody paged: a restart's new record sequence. */
    public static final String LOW = "low";

    /**
     * Most evidence ids an alert carries; {@link #evidenceCount} says how many events there were.
     */
    public static final int MAX_EVIDENCE = 50;

    public String id;
    public String rule;
    public String severity;
    public String server;

    /** Who or what the alert is about: an account (user@host), an origin (ip or host), a table. */
    public String subject;

    public String summary;
    public long firstEventMillis;
    public long lastEventMillis;
    public List<String> evidence = new ArrayList<>();
    public int evidenceCount;

    /** Compliance controls the alert concerns (the evidence's controls). */
    public List<String> controls = new ArrayList<>();

    /** A record_gap alert's class ({@link GapClass}); null for every other rule. */
    public String gapClass;

    /** When the job raised it (wall clock): the only field a replay may change. */
    public long raisedAtMillis;

    public Alert() {}

    public static Alert of(
            String rule,
            String severity,
            String id,
            String server,
            String subject,
            String summary) {
        Alert a = new Alert();
        a.rule = rule;
        a.severity = severity;
        a.id = id;
        a.server = server;
        a.subject = subject;
        a.summary = summary;
        a.raisedAtMillis = System.currentTimeMillis();
        return a;
    }

    public Alert withEvidence(List<String> eventIds, long first, long last) {
        evidenceCount = eventIds.size();
        evidence = new ArrayList<>(eventIds.subList(0, Math.min(eventIds.size(), MAX_EVIDENCE)));
        firstEventMillis = first;
        lastEventMillis = last;
        return this;
    }

    public Alert withControls(List<String> c) {
        controls = c == null ? new ArrayList<>() : new ArrayList<>(c);
        return this;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Alert)) return false;
        Alert a = (Alert) o;
        return Objects.equals(id, a.id)
                && Objects.equals(rule, a.rule)
                && Objects.equals(evidence, a.evidence);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id);
    }

    @Override
    public String toString() {
        return "Alert{" + id + ", " + severity + ": " + summary + "}";
    }
}
