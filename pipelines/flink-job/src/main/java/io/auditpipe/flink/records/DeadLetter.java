package io.auditpipe.flink.records;

import java.io.Serializable;

/**
 * Something the pipeline could not turn into a stored event, kept with the reason and the original
 * bytes (schemas/dead-letter.schema.json). Written to topic audit.deadletter and collection
 * dead_letters; nothing is dropped silently.
 */
public class DeadLetter implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * The collector could not ship the line whole, or reports lines it lost ({@link
     * io.auditpipe.reader.RecordReader#STAGE_COLLECT}).
     */
    public static final String STAGE_COLLECT = io.auditpipe.reader.RecordReader.STAGE_COLLECT;

    /** The message could not be parsed (bad key, bad line, unknown format). */
    public static final String STAGE_PARSE = io.auditpipe.reader.RecordReader.STAGE_PARSE;

    /** The event is stored but arrived too late for its minute in the stats. */
    public static final String STAGE_STATS = "stats";

    /** The store refused the document for good (not a transient error). */
    public static final String STAGE_STORE = "store";

    /**
     * Deterministic: {@code <stage>:<topic>/<partition>/<offset>}, so replays do not duplicate it.
     */
    public String id;

    public String stage;
    public String reason;
    public byte[] originalKey;
    public byte[] originalValue;

    /** Server and format from the key, when the key could be read. */
    public String server;

    public String format;
    public String sourceFile;
    public KafkaOrigin origin;
    public long detectedAtMillis;

    /**
     * What was masked in the original bytes (pan, a configured pattern's name); null when nothing.
     */
    public java.util.List<String> masked;

    public DeadLetter() {}

    public static DeadLetter of(
            String stage, String reason, byte[] key, byte[] value, KafkaOrigin origin) {
        DeadLetter d = new DeadLetter();
        d.id = stage + ":" + origin.coordinates();
        d.stage = stage;
        d.reason = reason;
        d.originalKey = key;
        d.originalValue = value == null ? new byte[0] : value;
        d.origin = origin;
        d.detectedAtMillis = System.currentTimeMillis();
        return d;
    }

    @Override
    public String toString() {
        return "DeadLetter{" + id + ": " + reason + "}";
    }
}
