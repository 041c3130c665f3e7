package io.auditpipe.flink.document;

import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;
import java.util.Date;
import java.util.List;
import java.util.Set;
import org.bson.Document;

/**
 * The event document: one stored event as the store holds it, the archive's row is made from, and
 * its chain link covers ({@link CanonicalForm}). Its fields are those of
 * schemas/audit-event.schema.json, in that order (EventSchemaTest checks them field by field). The
 * store, the archive and the chain all build it here, so the three cannot differ.
 */
public final class EventDocument {
    private EventDocument() {}

    /**
     * The event field with the SHA-256 of the original line; the events sink checks duplicate keys
     * with it.
     */
    public static final String LINE_DIGEST_FIELD = "line_sha256";

    /**
     * The imported chain an event is linked in (absent: the server's live chain); the digest covers
     * it.
     */
    public static final String CHAIN_FIELD = "chain";

    /** The event's link number in its server's chain. */
    public static final String SEQ_FIELD = "chain_seq";

    /** The link's digest: over the previous one and the canonical form of everything else. */
    public static final String DIGEST_FIELD = "chain_digest";

    /**
     * The link's MAC with the chain's link key ({@link io.auditpipe.flink.chain.LinkKey}); absent
     * without one.
     */
    public static final String MAC_FIELD = "chain_mac";

    /** The fields a link's digest does not cover (they are the link). */
    public static final Set<String> CHAIN_FIELDS = Set.of(SEQ_FIELD, DIGEST_FIELD, MAC_FIELD);

    /** The fields enrichment adds to an event document (docs/compliance.md). */
    public static final List<String> ENRICHMENT_FIELDS =
            List.of(
                    "category",
                    "action",
                    "tables",
                    "tables_error",
                    "data_classes",
                    "principal_class",
                    "access_violations",
                    "in_change_window",
                    "after_hours",
                    "controls");

    /** The document of an event, with its chain fields when it has been linked. */
    public static Document of(IngestedEvent ie) {
        AuditEvent e = ie.event;
        Document d =
                new Document("_id", e.id)
                        .append("server", e.server)
                        .append("format", e.format)
                        .append("source_file", e.sourceFile)
                        .append("collector", e.collector)
                        .append("record_id", e.recordId)
                        .append("event_time", new Date(e.eventTimeMillis))
                        .append("event_name", e.eventName);
        putIfNotNull(d, "command_class", e.commandClass);
        putIfNotNull(d, "connection_id", e.connectionId);
        putIfNotNull(d, "status", e.status);
        putIfNotNull(d, "sqltext", e.sqltext);
        putIfNotNull(d, "user", e.user);
        putIfNotNull(d, "user_raw", e.userRaw);
        putIfNotNull(d, "priv_user", e.privUser);
        putIfNotNull(d, "os_user", e.osUser);
        putIfNotNull(d, "os_login", e.osLogin);
        putIfNotNull(d, "proxy_user", e.proxyUser);
        putIfNotNull(d, "host", e.host);
        putIfNotNull(d, "ip", e.ip);
        putIfNotNull(d, "db", e.db);
        putIfNotNull(d, "auth_outcome", e.authOutcome);
        putIfNotNull(d, "outcome", e.outcome());
        if (e.extra != null && !e.extra.isEmpty()) {
            d.append("extra", new Document(e.extra));
        }
        putIfNotNull(d, "category", e.category);
        putIfNotNull(d, "action", e.action);
        putIfNotNull(d, "tables", e.tables);
        putIfNotNull(d, "tables_error", e.tablesError);
        putIfNotNull(d, "data_classes", e.dataClasses);
        putIfNotNull(d, "principal_class", e.principalClass);
        if (e.accessViolations != null && !e.accessViolations.isEmpty()) {
            d.append("access_violations", e.accessViolations);
        }
        putIfNotNull(d, "in_change_window", e.inChangeWindow);
        putIfNotNull(d, "after_hours", e.afterHours);
        putIfNotNull(d, "controls", e.controls);
        putIfNotNull(d, "masked", e.masked);
        putIfNotNull(d, LINE_DIGEST_FIELD, ie.lineSha256);
        putIfNotNull(d, "original", ie.original);
        if (!ie.eventTimeTrusted) {
            d.append("event_time_trusted", false); // absent = trusted
        }
        d.append("ingest", origin(ie.origin));
        putIfNotNull(d, CHAIN_FIELD, ie.chain);
        if (ie.chainDigest != null) { // the link covers everything above (CanonicalForm)
            d.append(SEQ_FIELD, ie.chainSeq).append(DIGEST_FIELD, ie.chainDigest);
            putIfNotNull(d, MAC_FIELD, ie.chainMac);
        }
        return d;
    }

    /**
     * Where a record was read from: the {@code ingest} of an event, the {@code kafka} of a dead
     * letter.
     */
    public static Document origin(KafkaOrigin o) {
        return new Document("topic", o.topic)
                .append("partition", o.partition)
                .append("offset", o.offset)
                .append("timestamp", new Date(o.timestampMillis));
    }

    /**
     * The dead-letter id of an id collision: the same whichever check finds it, so it is kept once.
     */
    public static String collisionId(Object eventId, Object lineSha256) {
        return "collision:" + eventId + ":" + lineSha256;
    }

    private static void putIfNotNull(Document d, String field, Object value) {
        if (value != null) {
            d.append(field, value);
        }
    }
}
