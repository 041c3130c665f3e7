package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.Serializable;
import java.util.Objects;

/**
 * Where an audit line came from: the Kafka message key of topic {@code audit.raw}.
 *
 * <p>The contract (schemas/audit-raw-message.md) puts the original line, byte for byte, in the
 * message value and this descriptor, as a small JSON object, in the key: {@code
 * {"v":1,"server":"db-01","format":"percona-json","source":"/var/lib/mysql/audit.log","collector":"rsyslog"}}.
 * The key is also what Kafka partitions by, so one source file stays in one partition, in order.
 *
 * @param cut set when the collector could not ship the line whole (the value is only part of it);
 *     else null
 * @param zone the server's time zone, for formats that write local time (mariadb-audit); key field
 *     "timezone", default UTC
 * @param lost set when the message is the collector's report of lines it lost (the value is the
 *     last line it shipped before them); else null
 */
public record SourceDescriptor(
        String server,
        String format,
        String source,
        String collector,
        CutLine cut,
        java.time.ZoneId zone,
        LostLines lost)
        implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final JsonFactory JSON = new JsonFactory();

    /** The only key version this code understands. */
    public static final int VERSION = 1;

    public SourceDescriptor {
        Objects.requireNonNull(zone, "zone");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(format, "format");
        source = source == null ? "" : source;
        collector = collector == null ? "" : collector;
    }

    public SourceDescriptor(String server, String format, String source, String collector) {
        this(server, format, source, collector, null);
    }

    public SourceDescriptor(
            String server, String format, String source, String collector, CutLine cut) {
        this(server, format, source, collector, cut, java.time.ZoneOffset.UTC, null);
    }

    /** The same source, its server in {@code zone}. */
    public SourceDescriptor inZone(java.time.ZoneId zone) {
        return new SourceDescriptor(server, format, source, collector, cut, zone, lost);
    }

    /**
     * The key's {@code cut} object: the collector's report that the message value is not the whole
     * line, why, and where the line is. rsyslog ends a message at a NUL byte and cannot carry a
     * line longer than max_line_size; it says so instead of shipping changed bytes as if they were
     * the line.
     *
     * @param lineBytes the line's length as the collector read it; for too-long lines, the bytes it
     *     read (max_line_size + 1)
     * @param offset byte offset of the line's start in {@link #file}; -1 if unknown
     */
    public record CutLine(String problem, long lineBytes, String file, long offset)
            implements Serializable {
        private static final long serialVersionUID = 1L;
        public static final String NUL_BYTE = "nul-byte";
        public static final String TOO_LONG = "too-long";

        public CutLine {
            file = file == null ? "" : file;
        }

        /** The dead letter's reason: what was cut, why, and where the whole line is. */
        public String describe(int shippedBytes) {
            String where =
                    (file.isEmpty() ? "" : " in " + file)
                            + (offset >= 0 ? " at byte offset " + offset : "");
            if (NUL_BYTE.equals(problem)) {
                return "the collector could not ship this line whole: it holds a NUL byte, where the collector"
                        + " ends a message; kept: the "
                        + shippedBytes
                        + " bytes before it, of "
                        + lineBytes
                        + "; the whole line is"
                        + where;
            }
            if (TOO_LONG.equals(problem)) {
                return "the collector could not ship this line whole: it is longer than max_line_size ("
                        + (lineBytes - 1)
                        + " bytes); kept: its first "
                        + shippedBytes
                        + " bytes; the whole line is"
                        + where;
            }
            return "the collector could not ship this line whole ("
                    + problem
                    + ", "
                    + lineBytes
                    + " bytes); the whole line is"
                    + where;
        }
    }

    /**
     * The key's {@code lost} object: the collector's report that lines of the source are gone
     * before it could ship them, and why. The message's value is the last line it shipped before
     * them (a line already on the topic), so that the job knows where the loss begins: for
     * Percona's numbered records, the number after which the sequence's missing numbers are the
     * collector's loss.
     *
     * @param file the oldest file still on disk, where the collector went on shipping; "" if
     *     unknown
     */
    public record LostLines(String problem, String file) implements Serializable {
        private static final long serialVersionUID = 1L;

        /**
         * The last line shipped is in none of the source's files: the server rotated through all
         * its kept files while the collector was down.
         */
        public static final String ROTATED_AWAY = "rotated-away";

        public LostLines {
            file = file == null ? "" : file;
        }

        /** The dead letter's reason: that lines are lost, after which line, and why. */
        public String describe() {
            String from = file.isEmpty() ? "" : "; shipping went on from the start of " + file;
            if (ROTATED_AWAY.equals(problem)) {
                return "the collector lost the lines written after this one, the last it shipped: they were rotated"
                        + " away from the disk while it was down (the server rotated through all its kept files)"
                        + from;
            }
            return "the collector lost the lines written after this one, the last it shipped ("
                    + problem
                    + ")"
                    + from;
        }
    }

    /**
     * Parses a message key.
     *
     * @throws InvalidSourceKeyException with a reason fit for a dead letter
     */
    public static SourceDescriptor parseKey(byte[] key) {
        if (key == null || key.length == 0) {
            throw new InvalidSourceKeyException(
                    "message has no key; expected the source descriptor JSON");
        }
        int bad = Utf8.firstInvalidByte(key);
        if (bad >= 0) {
            throw new InvalidSourceKeyException(
                    "message key is not valid UTF-8 (byte " + bad + ")");
        }
        Integer version = null;
        String server = null, format = null, source = null, collector = null;
        CutLine cut = null;
        LostLines lost = null;
        java.time.ZoneId zone = java.time.ZoneOffset.UTC;
        try (JsonParser p = JSON.createParser(key)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidSourceKeyException("message key is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "v" -> {
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            throw new InvalidSourceKeyException(
                                    "message key field 'v' is not an integer");
                        }
                        version = p.getIntValue();
                    }
                    case "server" -> server = textOrNull(p, value, field);
                    case "format" -> format = textOrNull(p, value, field);
                    case "source" -> source = textOrNull(p, value, field);
                    case "collector" -> collector = textOrNull(p, value, field);
                    case "cut" -> cut = readCut(p, value);
                    case "lost" -> lost = readLost(p, value);
                    case "timezone" -> {
                        String name = textOrNull(p, value, field);
                        try {
                            zone = name == null ? zone : java.time.ZoneId.of(name);
                        } catch (java.time.DateTimeException e) {
                            throw new InvalidSourceKeyException(
                                    "message key field 'timezone' is not a time zone: '"
                                            + name
                                            + "'");
                        }
                    }
                    default -> p.skipChildren(); // forward compatible: unknown fields are ignored
                }
            }
            if (p.nextToken() != null) {
                throw new InvalidSourceKeyException(
                        "message key has trailing content after the JSON object");
            }
        } catch (JsonProcessingException e) {
            throw new InvalidSourceKeyException(
                    "message key is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new InvalidSourceKeyException("message key is unreadable: " + e.getMessage());
        }
        if (version == null || version != VERSION) {
            throw new InvalidSourceKeyException(
                    "message key version "
                            + version
                            + " is not supported (expected "
                            + VERSION
                            + ")");
        }
        if (server == null || server.isEmpty()) {
            throw new InvalidSourceKeyException("message key has no 'server'");
        }
        if (format == null || format.isEmpty()) {
            throw new InvalidSourceKeyException("message key has no 'format'");
        }
        return new SourceDescriptor(server, format, source, collector, cut, zone, lost);
    }

    private static LostLines readLost(JsonParser p, JsonToken value) throws IOException {
        ProblemFields f = readProblem(p, value, "lost");
        return new LostLines(f.problem, f.file);
    }

    private static CutLine readCut(JsonParser p, JsonToken value) throws IOException {
        ProblemFields f = readProblem(p, value, "cut");
        return new CutLine(f.problem, f.lineBytes, f.file, f.offset);
    }

    /**
     * The fields of a 'lost' or 'cut' object; a cut's line_bytes and offset too (-1 when absent).
     */
    private record ProblemFields(String problem, String file, long lineBytes, long offset) {}

    private static ProblemFields readProblem(JsonParser p, JsonToken value, String name)
            throws IOException {
        if (value != JsonToken.START_OBJECT) {
            throw new InvalidSourceKeyException(
                    "message key field '" + name + "' is not an object");
        }
        boolean cut = name.equals("cut");
        String problem = null, file = null;
        long lineBytes = -1, offset = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "problem" -> problem = textOrNull(p, v, name + ".problem");
                case "file" -> file = textOrNull(p, v, name + ".file");
                case "line_bytes" -> {
                    if (cut) lineBytes = integer(p, v, "cut.line_bytes");
                    else p.skipChildren();
                }
                case "offset" -> {
                    if (cut) offset = integer(p, v, "cut.offset");
                    else p.skipChildren();
                }
                default -> p.skipChildren();
            }
        }
        if (problem == null || problem.isEmpty()) {
            throw new InvalidSourceKeyException(
                    "message key field '" + name + "' has no 'problem'");
        }
        return new ProblemFields(problem, file, lineBytes, offset);
    }

    private static long integer(JsonParser p, JsonToken value, String field) throws IOException {
        if (value != JsonToken.VALUE_NUMBER_INT) {
            throw new InvalidSourceKeyException(
                    "message key field '" + field + "' is not an integer");
        }
        return p.getLongValue();
    }

    private static String textOrNull(JsonParser p, JsonToken value, String field)
            throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.VALUE_STRING) {
            throw new InvalidSourceKeyException(
                    "message key field '" + field + "' is not a string");
        }
        return p.getText();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SourceDescriptor)) return false;
        SourceDescriptor that = (SourceDescriptor) o;
        return server.equals(that.server)
                && format.equals(that.format)
                && source.equals(that.source)
                && collector.equals(that.collector)
                && zone.equals(that.zone);
    }

    @Override
    public int hashCode() {
        return Objects.hash(server, format, source, collector, zone);
    }

    @Override
    public String toString() {
        return "SourceDescriptor{server="
                + server
                + ", format="
                + format
                + ", source="
                + source
                + ", collector="
                + collector
                + ", zone="
                + zone
                + "}";
    }

    /** A key that does not follow the contract; the message goes to the dead letters. */
    public static final class InvalidSourceKeyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public InvalidSourceKeyException(String reason) {
            super(reason);
        }
    }
}
