package io.auditpipe.parser;

/**
 * The deterministic identity of an audit record in the store.
 *
 * <p>{@code <server>/<record>}: the configured server name plus the record id the audit plugin
 * wrote (Percona: {@code <sequence>_<log start time>}, unique for the life of the server's log).
 * The same line read twice (collector retry, Kafka replay, job restart) gets the same id, so the
 * store keeps exactly one document for it. Readable on purpose: an auditor can take an id from a
 * report back to the line in the original file.
 */
public final class EventIds {
    private EventIds() {}

    public static String eventId(String server, String recordId) {
        if (server == null || server.isEmpty()) {
            throw new IllegalArgumentException("server is empty");
        }
        if (recordId == null || recordId.isEmpty()) {
            throw new IllegalArgumentException("record id is empty");
        }
        return server + "/" + recordId;
    }

    /**
     * A record id for a format that writes none: the event's time, its connection id and the start
     * of the record's SHA-256, so the same record read again gets the same id.
     */
    public static String contentId(AuditEvent e, byte[] record) {
        return java.time.Instant.ofEpochMilli(e.eventTimeMillis)
                + "-"
                + (e.connectionId == null ? "0" : e.connectionId)
                + "-"
                + Digests.sha256Hex(record).substring(0, 12);
    }
}
