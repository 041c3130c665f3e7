package io.auditpipe.flink.stream;

import java.io.Serializable;

/** One message of the event stream: its topic, key (an event's or alert's id) and JSON value. */
public class StreamMessage implements Serializable {
    private static final long serialVersionUID = 1L;

    public String topic;
    public String key;
    public byte[] value;
    public long timestampMillis;

    /**
     * The fields the message carries cut, or leaves out, comma-separated (the header {@link
     * #TRUNCATED_HEADER}); null for none.
     */
    public String truncated;

    /**
     * The record header naming the fields a message carries cut to the stream's text limit or
     * leaves out.
     */
    public static final String TRUNCATED_HEADER = "auditpipe-truncated";

    public StreamMessage() {}

    public StreamMessage(String topic, String key, byte[] value, long timestampMillis) {
        this.topic = topic;
        this.key = key;
        this.value = value;
        this.timestampMillis = timestampMillis;
    }
}
