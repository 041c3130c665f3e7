package io.auditpipe.flink.records;

import io.auditpipe.parser.AuditEvent;
import java.io.Serializable;
import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * A normalized event together with the Kafka message it was read from. Crosses shuffles with
 * IngestedEventSerializer (a field added here must be added there; its test says so).
 */
@TypeInfo(IngestedEventSerializer.Factory.class)
public class IngestedEvent implements Serializable {
    private static final long serialVersionUID = 1L;

    public AuditEvent event;
    public KafkaOrigin origin;

    /**
     * SHA-256 of the original line (hex): tells a replay of this record from a different record
     * with its id.
     */
    public String lineSha256;

    /**
     * The original record as the collector shipped it (UTF-8 text: a record that is not valid UTF-8
     * is a dead letter), kept in the stored document so that what the server wrote can be shown
     * next to what was made of it.
     */
    public String original;

    /**
     * False when the record's own time was too far ahead of when it was shipped to be trusted
     * (AuditRecordDeserializer): then the stream uses the shipping time, and watermarks ignore it.
     */
    public boolean eventTimeTrusted = true;

    /**
     * The imported chain this event is linked in ({@code auditpipe import}: one per run and
     * server), null for the server's live chain. Set by the chain ({@link
     * io.auditpipe.flink.chain.ChainEvents}).
     */
    public String chain;

    /**
     * This event's link in its server's chain (io.auditpipe.flink.chain.EventChain); 0 before it is
     * linked.
     */
    public long chainSeq;

    /** The link's digest (hex), null before it is linked. */
    public String chainDigest;

    /**
     * The link's MAC (hex, io.auditpipe.flink.chain.LinkKey), null before it is linked or without a
     * link key.
     */
    public String chainMac;

    /**
     * The event's store document as the chain built it to link it (chain fields included), so that
     * the store sink chained after it does not build it again. Transient: not serialized, so null
     * after a shuffle, where the document is built from the fields (StoreDocuments.eventInsert).
     */
    public transient org.bson.Document document;

    public IngestedEvent() {}

    public IngestedEvent(AuditEvent event, KafkaOrigin origin, String lineSha256) {
        this.event = event;
        this.origin = origin;
        this.lineSha256 = lineSha256;
    }

    /** The stream time of this event: its own time when trusted, else the time it was shipped. */
    public long streamTimeMillis() {
        return eventTimeTrusted ? event.eventTimeMillis : origin.timestampMillis;
    }

    @Override
    public String toString() {
        return "IngestedEvent{" + event + " @ " + origin + "}";
    }
}
