package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.io.Serializable;
import java.util.Objects;

/**
 * Where an audit line came from: the Kafka message key of topic {@code audit.raw}.
 *
 * <p>The contract (schemas/audit-raw-message.md) puts the original line, byte for byte, in the
 * message value and this descriptor, as a small JSON object, in the key:
 * {@code {"v":1,"server":"db-01","format":"percona-json","source":"/var/lib/mysql/audit.log","collector":"rsyslog"}}.
 * The key is also what Kafka partitions by, so one source file stays in one partition, in order.
 */
public final class SourceDescriptor implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final JsonFactory JSON = new JsonFactory();

    /** The only key version this code understands. */
    public static final int VERSION = 1;

    private final String server;
    private final String format;
    private final String source;
    private final String collector;

    public SourceDescriptor(String server, String format, String source, String collector) {
        this.server = Objects.requireNonNull(server, "server");
        this.format = Objects.requireNonNull(format, "format");
        this.source = source == null ? "" : source;
        this.collector = collector == null ? "" : collector;
    }

    public String server() { return server; }
    public String format() { return format; }
    public String source() { return source; }
    public String collector() { return collector; }

    /**
     * Parses a message key.
     *
     * @throws InvalidSourceKeyException with a reason fit for a dead letter
     */
    public static SourceDescriptor parseKey(byte[] key) {
        if (key == null || key.length == 0) {
            throw new InvalidSourceKeyException("message has no key; expected the source descriptor JSON");
        }
        int bad = Utf8.firstInvalidByte(key);
        if (bad >= 0) {
            throw new InvalidSourceKeyException("message key is not valid UTF-8 (byte " + bad + ")");
        }
        Integer version = null;
        String server = null, format = null, source = null, collector = null;
        try (JsonParser p = JSON.createParser(key)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidSourceKeyException("message key is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "v":
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            throw new InvalidSourceKeyException("message key field 'v' is not an integer");
                        }
                        version = p.getIntValue();
                        break;
                    case "server": server = textOrNull(p, value, field); break;
                    case "format": format = textOrNull(p, value, field); break;
                    case "source": source = textOrNull(p, value, field); break;
                    case "collector": collector = textOrNull(p, value, field); break;
                    default: p.skipChildren(); // forward compatible: unknown fields are ignored
                }
            }
            if (p.nextToken() != null) {
                throw new InvalidSourceKeyException("message key has trailing content after the JSON object");
            }
        } catch (JsonProcessingException e) {
            throw new InvalidSourceKeyException("message key is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new InvalidSourceKeyException("message key is unreadable: " + e.getMessage());
        }
        if (version == null || version != VERSION) {
            throw new InvalidSourceKeyException("message key version " + version + " is not supported (expected " + VERSION + ")");
        }
        if (server == null || server.isEmpty()) {
            throw new InvalidSourceKeyException("message key has no 'server'");
        }
        if (format == null || format.isEmpty()) {
            throw new InvalidSourceKeyException("message key has no 'format'");
        }
        return new SourceDescriptor(server, format, source, collector);
    }

    private static String textOrNull(JsonParser p, JsonToken value, String field) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.VALUE_STRING) {
            throw new InvalidSourceKeyException("message key field '" + field + "' is not a string");
        }
        return p.getText();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SourceDescriptor)) return false;
        SourceDescriptor that = (SourceDescriptor) o;
        return server.equals(that.server) && format.equals(that.format)
                && source.equals(that.source) && collector.equals(that.collector);
    }

    @Override
    public int hashCode() { return Objects.hash(server, format, source, collector); }

    @Override
    public String toString() {
        return "SourceDescriptor{server=" + server + ", format=" + format + ", source=" + source
                + ", collector=" + collector + "}";
    }

    /** A key that does not follow the contract; the message goes to the dead letters. */
    public static final class InvalidSourceKeyException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        public InvalidSourceKeyException(String reason) { super(reason); }
    }
}
