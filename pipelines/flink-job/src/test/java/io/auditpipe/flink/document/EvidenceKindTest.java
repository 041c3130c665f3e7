package io.auditpipe.flink.document;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.enrich.EventTaxonomy;
import io.auditpipe.enrich.EvidenceKind;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * Each evidence kind is said twice: as a test of the event (which events the job writes to the
 * evidence collection) and as a condition on the stored document (which catalog queries may run on
 * that collection, published in the job contract). Over events of every category, outcome and data
 * class, the two agree.
 */
class EvidenceKindTest {

    @Test
    void eachKindsConditionOnTheDocumentSelectsTheEventsItMatches() {
        int evidence = 0;
        for (AuditEvent e : events()) {
            Document d =
                    EventDocument.of(
                            new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, 1, 0L), "00"));
            for (EvidenceKind k : EvidenceKind.values()) {
                assertEquals(k.matches(e), holds(k.condition(), d), k.id + " on " + d.toJson());
            }
            evidence += EvidenceKind.any(e) ? 1 : 0;
        }
        assertTrue(
                evidence > 0 && evidence < events().size(),
                "some events are evidence, some not: " + evidence);
    }

    @Test
    void anOrdinaryQueryIsNoEvidence() {
        AuditEvent e = event("data_read", null, List.of());
        assertFalse(EvidenceKind.any(e));
        e.dataClasses = List.of("pci_cardholder");
        assertTrue(EvidenceKind.CLASSIFIED_DATA.matches(e));
    }

    /**
     * Every category, with and without a login outcome, with no, an empty and a data class list.
     */
    private static List<AuditEvent> events() {
        List<AuditEvent> out = new ArrayList<>();
        for (String category : EventTaxonomy.CATEGORIES) {
            for (String outcome :
                    new String[] {null, AuditEvent.AUTH_SUCCESS, AuditEvent.AUTH_FAILURE}) {
                for (List<String> classes :
                        java.util.Arrays.asList(null, List.<String>of(), List.of("hipaa_ephi"))) {
                    out.add(event(category, outcome, classes));
                }
            }
        }
        return out;
    }

    private static AuditEvent event(String category, String outcome, List<String> classes) {
        AuditEvent e = new AuditEvent();
        e.id = "db-01/1_2026-11-22T10:00:00";
        e.server = "db-01";
        e.eventTimeMillis = 1_795_000_000_000L;
        e.eventName = outcome == null ? "Query" : "Connect";
        e.authOutcome = outcome;
        e.category = category;
        e.dataClasses = classes;
        return e;
    }

    /**
     * A one-field condition as MongoDB reads it: equality, or {$exists} on a path whose last part
     * may be a list index.
     */
    @SuppressWarnings("unchecked")
    private static boolean holds(Map<String, Object> condition, Document d) {
        assertEquals(1, condition.size(), "one field per kind");
        Map.Entry<String, Object> c = condition.entrySet().iterator().next();
        String[] path = c.getKey().split("\\.");
        Object value = d;
        for (String part : path) {
            if (value instanceof Document doc) value = doc.get(part);
            else if (value instanceof List<?> list && part.matches("\\d+")) {
                int i = Integer.parseInt(part);
                value = i < list.size() ? list.get(i) : null;
            } else value = null;
        }
        if (c.getValue() instanceof Map<?, ?> op) {
            assertEquals(Map.of("$exists", true), op, "only {$exists: true}");
            return value != null;
        }
        return c.getValue().equals(value);
    }
}
